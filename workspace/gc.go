package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// GCResult says what a garbage collection removed.
type GCResult struct {
	Checkpoints int   `json:"checkpoints"`
	Blobs       int   `json:"blobs"`
	Bytes       int64 `json:"bytes"` // size of the store afterwards
}

// GC bounds the store: while it is larger than its limit, the oldest
// checkpoints are dropped (never keep, the one just written); then blobs no
// remaining checkpoint references are deleted.
func (s *CheckpointStore) GC(keep string) (GCResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cks, err := s.list()
	if err != nil {
		return GCResult{}, err
	}
	blobs, err := s.blobSizes()
	if err != nil {
		return GCResult{}, err
	}
	var res GCResult
	total := int64(0)
	for _, n := range blobs {
		total += n
	}
	// Size a checkpoint frees: its blobs no newer checkpoint shares.
	refs := map[string]int{}
	for _, ck := range cks {
		for _, f := range ck.Files {
			refs[f.Preimage]++
		}
	}
	for _, ck := range cks {
		if total <= s.maxBytes {
			break
		}
		if ck.ID == keep {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, "checkpoints", ck.ID+".json")); err != nil {
			return res, fmt.Errorf("gc checkpoint %s: %w", ck.ID, err)
		}
		res.Checkpoints++
		for _, f := range ck.Files {
			if refs[f.Preimage]--; refs[f.Preimage] == 0 {
				total -= blobs[f.Preimage]
			}
		}
	}
	for sum := range blobs {
		if refs[sum] > 0 {
			continue
		}
		if err := os.Remove(s.blobPath(sum)); err != nil && !os.IsNotExist(err) {
			return res, fmt.Errorf("gc blob %s: %w", sum[:12], err)
		}
		res.Blobs++
	}
	res.Bytes = total
	return res, nil
}

// blobSizes maps every stored blob to its size.
func (s *CheckpointStore) blobSizes() (map[string]int64, error) {
	out := map[string]int64{}
	root := filepath.Join(s.dir, "blobs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !blobName.MatchString(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[d.Name()] = info.Size()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gc: list blobs: %w", err)
	}
	return out, nil
}
