package daemon

// The hidden windows of a session, one per background process: the one
// place that names them.
const (
	// CoordinatorWindow runs the review coordinator's keeper (party
	// coordinator keep).
	CoordinatorWindow = "party-coordinator"
	// SupervisorWindow runs the trigger supervisor's keeper (party
	// supervise keep).
	SupervisorWindow = "party-supervise"
	// NotifierWindow runs the notifier's keeper (party notify keep).
	NotifierWindow = "party-notify"
	// SwitchboardWindow runs a detached switchboard (party route --detach).
	SwitchboardWindow = "party-route"
	// RecorderWindow runs the recorder (party start --record).
	RecorderWindow = "party-record"
	// DashWindow runs the dashboard (party start --dashboard); it is meant
	// to be seen, so it is not among Background.
	DashWindow = "party-dash"
)

// Background are the windows party runs its helpers in, which an iTerm2
// client must not open as tabs (iterm.View leaves them out).
var Background = []string{CoordinatorWindow, SwitchboardWindow, SupervisorWindow, NotifierWindow, RecorderWindow}
