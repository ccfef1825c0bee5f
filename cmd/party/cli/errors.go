package cli

// reported is an error a command has already shown: its JSON written
// (json) or its message printed (text). Main still maps it to an exit code.
type reported struct {
	error
	json, text bool
}

func (r *reported) Unwrap() error { return r.error }
