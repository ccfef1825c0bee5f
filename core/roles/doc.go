// Package roles resolves a role to exactly one pane (Resolve, with the
// legacy two-pane rule and its errors ErrAmbiguous, ErrNotFound,
// ErrUnresolved), says which names can be roles (ValidRole) and lists the
// roles of a pane listing (Names, ByPane). It is pure: it works on a pane
// listing and never talks to tmux. Delivering to the resolved pane is
// core/deliver's job, and the switchboard that routes tagged blocks
// between roles (party route) is core/relay's.
package roles
