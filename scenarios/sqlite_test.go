package scenarios

import (
	"database/sql"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite" // the driver party's stores use
)

// cmdSQLite runs SQL statements on the SQLite database FILE (made when
// missing) with the driver party uses: a scenario makes a database party
// did not make, or one a newer party wrote.
//
//	sqlite FILE SQL...
func cmdSQLite(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! sqlite")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: sqlite FILE SQL...")
	}
	db, err := sql.Open("sqlite", "file:"+ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	for _, q := range args[1:] {
		_, err := db.Exec(q)
		ts.Check(err)
	}
}
