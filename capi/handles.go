package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/arcadego/arcadego/core/engine"
	"github.com/arcadego/arcadego/core/errs"
)

// The handle table. Tokens come from one counter that never repeats, so a
// stale token (closed, committed, or of the other kind) is never mistaken
// for a live handle: it is simply absent. Lock order: table.mu is never
// held while taking a dbHandle's or txHandle's mutex.
var table = struct {
	mu      sync.Mutex
	next    uintptr
	dbs     map[uintptr]*dbHandle
	txs     map[uintptr]*txHandle
	results map[uintptr]*result
}{
	dbs:     map[uintptr]*dbHandle{},
	txs:     map[uintptr]*txHandle{},
	results: map[uintptr]*result{},
}

// newToken returns a fresh token. Caller holds table.mu.
func newToken() uintptr {
	table.next++
	return table.next
}

// dbHandle is an open database.
type dbHandle struct {
	db         *engine.DB
	timeColumn string // the time column of inserted batches and of results

	// mu guards the fields below. A closed handle has closed set and no
	// transactions; it is already out of the table.
	mu     sync.Mutex
	closed bool
	ctx    context.Context // canceled by arcadego_cancel, then replaced
	cancel context.CancelFunc
	txs    map[uintptr]*txHandle

	lastType atomic.Pointer[string]     // the type name of the last insert (see typeName)
	lastPlan atomic.Pointer[resultPlan] // the result schema of the last scan of a whole type
}

// context returns the context that the next long call runs under.
func (d *dbHandle) context() context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ctx
}

// isClosed reports whether arcadego_close has run on d.
func (d *dbHandle) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// txHandle is an open transaction. mu serializes its use, so two threads
// misusing one transaction get an error or a wait, never a data race.
type txHandle struct {
	db *dbHandle

	mu    sync.Mutex
	done  bool // committed, rolled back, or rolled back by the db's close
	tx    *engine.Tx
	cells int // the cells (rows x columns) inserted so far: a large commit runs unlocked
}

// errNullHandle and errClosedHandle are the answers for bad tokens.
func errNullHandle(what string) error {
	return fmt.Errorf("%s handle is NULL: %w", what, errs.ErrInvalidArgument)
}

func errClosedHandle(what string) error {
	return fmt.Errorf("%s handle is closed or unknown: %w", what, errs.ErrClosed)
}

func lookupDB(token uintptr) (*dbHandle, error) {
	if token == 0 {
		return nil, errNullHandle("database")
	}
	table.mu.Lock()
	d := table.dbs[token]
	table.mu.Unlock()
	if d == nil {
		return nil, errClosedHandle("database")
	}
	return d, nil
}

func lookupTx(token uintptr) (*txHandle, error) {
	if token == 0 {
		return nil, errNullHandle("transaction")
	}
	table.mu.Lock()
	t := table.txs[token]
	table.mu.Unlock()
	if t == nil {
		return nil, errClosedHandle("transaction")
	}
	return t, nil
}

// addDB registers a new database handle and returns its token.
func addDB(db *engine.DB, timeColumn string) uintptr {
	d := &dbHandle{db: db, timeColumn: timeColumn, txs: map[uintptr]*txHandle{}}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	table.mu.Lock()
	defer table.mu.Unlock()
	token := newToken()
	table.dbs[token] = d
	return token
}

// begin starts a transaction on d and registers it.
func (d *dbHandle) begin() (uintptr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, errClosedHandle("database")
	}
	tx, err := d.db.Begin()
	if err != nil {
		return 0, err
	}
	t := &txHandle{db: d, tx: tx}
	table.mu.Lock()
	token := newToken()
	table.txs[token] = t
	table.mu.Unlock()
	d.txs[token] = t
	return token, nil
}

// finish runs end (commit or rollback) on the transaction and invalidates
// its token, whatever end returns.
func (t *txHandle) finish(token uintptr, end func(*engine.Tx) error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return errClosedHandle("transaction")
	}
	t.done = true
	table.mu.Lock()
	delete(table.txs, token)
	table.mu.Unlock()
	t.db.mu.Lock()
	delete(t.db.txs, token)
	t.db.mu.Unlock()
	return end(t.tx)
}

// use runs fn on the open transaction.
func (t *txHandle) use(fn func(*engine.Tx) error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return errClosedHandle("transaction")
	}
	return fn(t.tx)
}

// closeDB invalidates the database token and its transactions' tokens,
// cancels its running calls, rolls the transactions back and closes the
// database.
func closeDB(token uintptr) error {
	if token == 0 {
		return errNullHandle("database")
	}
	table.mu.Lock()
	d := table.dbs[token]
	delete(table.dbs, token)
	table.mu.Unlock()
	if d == nil {
		return errClosedHandle("database")
	}

	d.mu.Lock()
	d.closed = true
	d.cancel()
	txs := d.txs
	d.txs = nil
	d.mu.Unlock()

	for token, t := range txs {
		table.mu.Lock()
		delete(table.txs, token)
		table.mu.Unlock()
		t.mu.Lock() // waits for a call running on it; cancel above shortens stream inserts
		if !t.done {
			t.done = true
			t.tx.Rollback()
		}
		t.mu.Unlock()
	}
	return d.db.Close()
}

// cancelDB cancels the calls running under d's context and installs a
// fresh one for the calls that follow.
func cancelDB(token uintptr) error {
	d, err := lookupDB(token)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosedHandle("database")
	}
	d.cancel()
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return nil
}
