// Package relay runs the planner/executor loop over tagged blocks: the task
// goes to the planner, its plan block to the executor, the executor's
// result block back to the planner, and the planner's report ends the task.
// The orchestration is here; moving text in and out of panes is behind the
// Panes interface, so it is tested without tmux.
package relay
