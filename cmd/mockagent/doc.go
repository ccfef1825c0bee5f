// Command mockagent is party's mock agent; built as claude, codex, gemini
// and mockagent, it plays the persona its name says (see package
// mockagents).
package main
