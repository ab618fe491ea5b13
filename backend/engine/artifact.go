package engine

import (
	"agenthub/backend"
	"agenthub/backend/store"
)

// artifact is the run's backend.ArtifactSink: the artifact and the event
// that announces it are committed together, before the tool returns, so the
// id the model is told always resolves.
func (rc *runCtl) artifact(d backend.ArtifactDraft) (backend.Artifact, error) {
	// Scanned here, on the tool's goroutine: the committer only hashes.
	d, err := rc.e.store.ScanArtifact(d)
	if err != nil {
		return backend.Artifact{}, err
	}
	var a backend.Artifact
	err = rc.commit(func(tx *store.Tx) error {
		var err error
		a, err = tx.PutArtifact(rc.rec.ID, d)
		return err
	})
	return a, err
}
