// Package blocks finds tagged blocks in agent output:
//
//	[[POLI:MSG {"to":"EXECUTER","type":"plan","id":"t1-plan"}]]
//	…body…
//	[[/POLI:MSG]]
//
// It reads captured screen text (ANSI escapes stripped, CRLF folded),
// ignores a block until its closing tag arrives, reports a malformed header
// with its line and column and skips it, and counts a block repeated by
// redraws once, by id, keeping its last well-formed copy. An opener that
// meets another opener before its closer is reported as unterminated and
// abandoned; the later opener starts the block.
package blocks
