// Package panes is the trigger supervisor's effects on a session's tmux
// panes. Effects is supervise.Effects over real panes (effects.go): Scan
// lists the agent panes party started, Probe looks for an operator's
// text, Prepare, Send, Reclaim, Look and Await deliver a trigger and read
// what came of it, Restart starts an agent again; Resume and Spawn are the
// headless fallback and a fresh agent (fallback.go), with the signs of
// life of a busy agent (pulse.go). Watch is tmux's news of the panes'
// changes for the loop, and StopPane how a stopping runtime's agent is
// ended (process.go).
package panes
