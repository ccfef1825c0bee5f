// Package party holds the operations of the party command, one function
// each, over an Env: what they take from the process (the tmux server, the
// clock, the environment, stderr and whether it is a terminal). The CLI
// parses flags into their options, calls one of them and prints what it
// returns; the wiring of core's packages into an operation lives here and
// nowhere else.
//
// Its parts:
//
//   - the Env and what it builds from it (env.go): the tmux client, the
//     configuration, the role resolver, the session deps (session.Deps,
//     with the coordinator's start and Gemini's hook wiring filled in),
//     the deliverer (NewDeliverer, deliverer.go);
//   - the operations, a file per area: sessions, panes and check
//     (session.go), send (send.go), talk (talk.go), the relay and the
//     switchboard (relay.go, route.go), the agents registry (agents.go),
//     the agents' hooks (hooks.go), the event log (log.go), recordings
//     (record.go), the review coordinator and the agents' instructions
//     (review.go; the process is core/review's SessionProcess), the
//     supervisor's commands (supervise.go, trigger_list.go; each reaches
//     the daemon through core/supervise's Door, door.go), pm
//     (pm*.go), the notifier's start and watch (notify.go; the daemon
//     is core/notify's Notifier), the dashboard (dash.go: core/dash's
//     feed filled in, its actions), iTerm2
//     (iterm.go), the demo (demo.go), trust (trust.go), other hosts
//     (hosts.go; the looks and the bridge are core/remote's), usage and
//     budgets (spend.go), worktrees (worktree.go);
//   - the wiring core/session takes from it (SessionDeps): Gemini's
//     settings (core/hook's GeminiWiring filled in) and the
//     coordinator's hidden window (startCoordinator);
//   - Classify and ErrUsage (errors.go): the one error table is
//     core/exitcode's, which this package and the CLI import;
//   - the types and helpers of lower packages the CLI names (names.go),
//     so that the CLI imports this package, the error table
//     (core/exitcode) and the printing of core/termsafe only.
package party
