// Package record writes asciinema v2 casts of panes: a header line
// {"version":2,"width","height","timestamp",…} and then one JSON array per
// event, [seconds, "o"|"i"|"r", data]. Output is decoded per pane as a
// byte stream, so a UTF-8 character split across two chunks is never
// mangled, and secrets matching the redaction patterns are replaced before
// anything is written.
package record
