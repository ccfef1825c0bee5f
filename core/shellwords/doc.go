// Package shellwords reads command lines by the quoting rules of a POSIX
// shell, with mvdan.cc/sh's parser, and never expands anything: no
// variables, globs, command substitutions or tildes.
//
// Two readings exist, one per kind of caller:
//
//   - SplitCommand reads one program's argv (a pane's launch command, an
//     agent command in the config, a hook command party installed): only
//     blanks, quotes and backslashes mean something; every other character,
//     ';', '|', '#', '$', '(' included, is a literal part of a word.
//   - Commands reads a script the way bash would (an agent's Bash tool
//     command) and lists the simple commands it runs.
//
// Both follow POSIX for backslashes: outside quotes a backslash escapes the
// next character (so C:\tmp\x is C:tmpx; quote it, 'C:\tmp\x' or
// "C:\tmp\x", to keep it), inside double quotes it escapes only $, `, ", \
// and a newline, inside single quotes it is literal, and a backslash before
// a newline joins the lines.
package shellwords
