// Package clock is the source of time for core. A Clock tells the time
// (Now), waits (Sleep) and makes timers and tickers (NewTimer, NewTicker:
// Timer and Ticker, the time package's, behind interfaces) for the waits
// that a select shares with other things. Real code uses Real, the wall
// clock; the simulator (sim) supplies a virtual clock whose timers fire as
// a test moves it, so that waits of minutes run in microseconds. Core
// calls none of time.Sleep, time.After, time.NewTimer and time.NewTicker
// but in dbfile.WhileBusy, whose pauses wait on another process's SQLite
// lock (its doc says why).
package clock
