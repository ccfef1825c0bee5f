// Package registry is the registry of agents party did not start: the
// names a user gave to such panes (./.party/agents.json, as tmux-team
// keeps them), and how a role resolves through it before the roles tagged
// on panes (Resolver); Load, Save and Edit (a change under the file's
// lock that keeps its trust) read and write it. The supervisor's runtimes
// are core/supervise's.
package registry
