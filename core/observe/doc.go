// Package observe reads one pane's state from its sources, most trusted
// first: the agent's own events (routed through party hook into the
// session's event log), then the screen, read by the agent's profile.
package observe
