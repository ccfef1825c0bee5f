// Package notify tells a person when an agent needs them: what happened
// (Event, made from the session's sources by Watch), whether it is told
// (Step: the per-event switches, de-duplication and a rate limit, a pure
// policy over a Gate), and the ways it is told (the sinks):
//
//  1. tmux: a message on every client of the session (display-message)
//     and a bell in the agent's pane, which tmux shows as the window's
//     bell flag and passes on to the clients;
//  2. terminal: the terminal's own notification, OSC 9 (iTerm2, WezTerm,
//     Windows Terminal, kitty) and OSC 777 (foot, Ghostty, rxvt, VTE),
//     written to each attached client's tty: straight to a plain client
//     (wrapped in a DCS passthrough when that tty is a pane of an outer
//     tmux or screen), and into the agent's pane for a control-mode client
//     (iTerm2), which reads the pane's output itself;
//  3. desktop: notify-send, else osascript, when the system has one,
//     exec'd with argv;
//  4. webhook: a JSON POST, ntfy's publish format, to a URL that only the
//     user's own configuration can set.
//
// Watch turns the session's sources into events: the agents' hook events
// (permission prompts, dialogs, failed turns, long turns that finished),
// the review coordinator's NEEDS_DISCUSSION and the supervisor's audit
// trail (failed triggers, those deferred past their limit, auto-blocked
// threads, failed runtimes). Its state, cursors and Gate included, is
// saved before anything is told, so a notifier killed with -9 resumes
// where it was and tells nothing twice (it may lose the one it was
// telling).
//
// Notifier is the daemon (party notify watch, a core/daemon that its
// keeper, party notify keep, restarts after a crash) over one session: New
// builds it from the configuration (the gate's Policy, the Sinks), Load
// resumes its saved Watch from its directory (Dir), Pass reads what the
// sources have new, decides, saves and tells, and writes each decision
// (Told) to LogFile; Run passes whenever it is woken and at least once a
// second until its context ends; Serve runs it as its daemon: the lock of
// Dir (daemon.Hold), its log, the supervisor's API as its AuditLog and
// the session's wake-ups. Start and Keep start it and keep it
// (daemon.go). core/party opens the session and gives it the panes'
// roles and the commands its window and its keeper run.
package notify
