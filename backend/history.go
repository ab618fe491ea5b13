package backend

// CodeRunImported: a run imported from a bundle is read-only; it cannot be
// resumed, cancelled or decided on here (issue 19).
const CodeRunImported FailureCode = "run_imported"

func init() {
	Recovery[CodeRunImported] = "Review it here; to continue the work, start a new run with its task, or resume it " +
		"where it was exported."
}
