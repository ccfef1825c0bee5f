// Package session starts, lays out, finds and stops party sessions:
//
//   - start (session.go, panes.go): it turns the --pane specs into panes
//     (agent argv, the claude and codex hook arguments), creates the tmux
//     session, window and panes, tags them (@party_role, @party_agent,
//     @party_hooks) and makes the session's state dir and record
//     (record.go), with hidden windows for the dashboard, the recorder and
//     the switchboard (windows.go);
//   - stop (session.go, procs.go): it kills the session and every process
//     it started, and undoes what start did to a folder;
//   - layout: a pane per role in one window, or a window per role, and
//     respawning a dead pane as start launched it (respawn.go);
//   - scope (scope.go): the session a command acts on, its roles and
//     their panes; attaching the terminal to it (attach.go); the session
//     of the team linked from a folder (Linked, linked.go) and switching
//     the client to it (SwitchTo); the party
//     sessions of a server (PartyInfos).
//
// It takes every dependency from Deps (deps.go) and reads no environment and prints
// nothing; what other packages do at start and stop (Gemini's hook
// settings, the review coordinator's window) it asks of Deps.Gemini and
// Deps.Coordinator, which core/party provides.
package session
