// Package exitcode is party's one error table: the exit statuses, each
// known error's stable code (--json's error.code) and exit status, and the
// words that document them (docs/exit-codes.md, which cmd/party/gendocs
// writes from Exits, Codes and Classes).
//
// Its parts: the Exit constants; Classify, the one place where an error
// becomes a code and an exit status (a failed trigger by its class, a
// supervisor down or another host's party by the code they reported);
// ErrorInfo and ErrorOf, an error as --json reports it, and ErrorJSON
// with the fields an error adds (JSONFielder); Exits, Codes and Classes,
// the table as the documentation shows it (docs.go).
//
// It imports the packages whose errors it names, so nothing it imports
// may import it: lower packages that need a code take a Classify func,
// which core/party (the wiring) and the CLI fill in from here.
package exitcode
