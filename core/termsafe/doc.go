// Package termsafe makes text that party did not write itself (an agent's
// answer, a block's body, a task title from GitHub, an event of the log)
// safe to print on a terminal. Such text may hold what a terminal acts on
// instead of showing: an escape sequence (CSI "ESC [", OSC "ESC ]" that sets
// the clipboard or the window title, DCS "ESC P", SS2/SS3 "ESC N"/"ESC O"),
// the bell, other C0 controls, DEL, and the C1 controls U+0080-U+009F, which
// some terminals read as 8-bit forms of the same sequences (0x9B is CSI,
// 0x9D OSC, 0x9C ST), whether UTF-8 encoded or raw bytes.
//
// Text shows each of them as a visible escape instead, so that nothing of it
// reaches the terminal raw and nothing of the text is lost: the introducer of
// every sequence is escaped, so what follows it is inert text.
//
// JSON does the same to JSON that party prints: encoding/json leaves DEL and
// the C1 controls raw in strings, JSON's \u escapes keep them exact for a
// decoder.
//
// WriteJSON, WriteJSONLine and WriteTable (print.go) are how party's
// commands print what was asked for, --json or a table, through JSON and
// Text.
package termsafe
