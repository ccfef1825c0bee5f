package party

import (
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/usage"
)

// ErrUsage is a command used wrongly: an argument, a flag or an option
// that cannot be used. It is usage.Err, which the options core
// checks (session, registry, task) are refused with.
var ErrUsage = usage.Err

// Classify is err's stable code and exit status in the one error table
// (exitcode.Classify).
func Classify(err error) (string, int) { return exitcode.Classify(err) }

// codeOf is err's code alone, for the packages that take a Classify func.
func codeOf(err error) string {
	code, _ := exitcode.Classify(err)
	return code
}
