// Package agent holds the profiles of the agent TUIs party drives: which
// programs they run as, how long to let a paste settle before Enter, and the
// screen patterns that tell an empty input line, a busy agent, a dialog and
// the permission an approval dialog asks.
package agent
