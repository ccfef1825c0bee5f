// Package panes is the trigger supervisor's effects on a session's tmux
// panes. Effects is supervise.Effects over real panes (effects.go): Scan
// lists the agent panes party started, PanesMark says cheaply whether a
// Scan could find anything new (with the ends of the runtimes' processes,
// watched through pidfds: exit.go), Probe looks for an operator's text,
// Prepare, Send, Reclaim, Look and Await deliver a trigger and read what
// came of it (trigger.go), Restart starts an agent again; Resume and Spawn are the
// headless fallback and a fresh agent (fallback.go), with the signs of
// life of a busy agent (pulse.go); Archive keeps the audit events that
// last in the session's event log once retention deletes their rows
// (archive.go). Watch is tmux's news of the panes' changes for the loop,
// and StopPane how a stopping runtime's agent is ended (process.go).
// Session puts them together into what the supervisor process of one
// party session runs (session.go: its store, operations and loop), over
// what core/party fills in.
package panes
