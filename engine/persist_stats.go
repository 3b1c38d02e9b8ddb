package engine

// PersistenceStats is the persistence state the metrics export, INFO
// persistence's figures as numbers.
type PersistenceStats struct {
	ChangesSinceSave int64 // rdb_changes_since_last_save
	SaveInProgress   bool  // rdb_bgsave_in_progress
	LastSaveOK       bool  // rdb_last_bgsave_status:ok
	LastSave         int64 // rdb_last_save_time, unix seconds
	Saves            int64 // rdb_saves
}

// PersistenceStats fills st; loop goroutine only.
func (e *Engine) PersistenceStats(st *PersistenceStats) {
	p := &e.snap
	*st = PersistenceStats{
		ChangesSinceSave: e.Dirty(),
		SaveInProgress:   p.job != nil,
		LastSaveOK:       p.lastOK,
		LastSave:         p.lastSave,
		Saves:            p.saves,
	}
}
