package cli

import (
	"github.com/partyhq/party/core/party"
)

// errUsage is a usage error of the CLI's own checks (party.ErrUsage).
var errUsage = party.ErrUsage

// reported is an error a command has already shown: its JSON written
// (json) or its message printed (text). Main still maps it to an exit code.
type reported struct {
	error
	json, text bool
}

func (r *reported) Unwrap() error { return r.error }

// errorJSON is an error as --json reports it.
type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func newErrorJSON(err error) *errorJSON {
	code, _ := party.Classify(err)
	return &errorJSON{Code: code, Message: err.Error()}
}
