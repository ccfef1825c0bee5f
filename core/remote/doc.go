// Package remote is what party does with the party of another host
// (core/hosts carries the calls): party hosts' look at a host (Look:
// whether it answers, the version there, its sessions and the runtimes
// their supervisors manage), a client of a supervisor's API there through
// the API bridge (Client), a trigger to a role there (Trigger: the
// session that has the role, the request in the body of the API call,
// the wait), a message and the runtimes there (Send, Runtimes; the
// session: SessionOf, TheSession), a party command run there with argv
// (Party: party send, talk and check, the text on its stdin, its --json
// and its error's code back; CallerFlag and CheckCaller, the version
// check of such a run), and this host's end of the bridge (Bridge: the
// hello, then the copy to the supervisor's socket). Version is this
// party's version, which the two ends compare.
//
// Local is a command of the party here as it calls another host's: the
// calls of ROLE@HOST (RoleAt splits it) that party send, talk, check,
// trigger, inbox send, runtimes --host and start --host make (Send, Talk,
// Check, Trigger, InboxSend, Outbound, Runtimes, Start), each refusing
// before any ssh runs what may not cross (free text on a command line,
// an operator's call from inside an agent's pane), and the lookup of a
// bare role no pane here has on the configured hosts (Elsewhere).
// Forwarder takes a supervisor's outbox to the hosts, OutboundMessage and
// WithOutbox show its entries among a thread's messages; SelfHost is this
// host's name in what it sends. A host's part of the dashboard is Dash
// (DashNamed, DashWatch, DashWatchNamed: by its name).
//
// A Caller holds what these take from the party that asks: ssh's runner,
// the clock, this party's version and the error table's Classify (the
// codes a look reports), which core/party fills in; so this package
// imports neither the table nor the wiring.
package remote
