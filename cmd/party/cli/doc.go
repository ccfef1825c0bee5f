// Package cli is party's command line: cobra commands, each an options
// struct filled from its flags and arguments and a run function that calls
// core/party (newXCmd(f, runF): a test passes a runF that captures the
// options). Its parts: the root command, the Factory and IOStreams and the
// one place errors become exit statuses and --json (main.go); the output
// helpers (output.go); a file per command or group. It imports core/party
// and printing helpers only (imports_test.go). Main is also what the
// scenarios register, so they run the real CLI in-process.
package cli
