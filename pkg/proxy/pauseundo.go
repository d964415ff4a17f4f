package proxy

import "slices"

// Undoable pauses: a console PAUSE that its client cancels while it
// waits puts back only what it changed, so a database paused before it,
// or a pool resumed out of an earlier PAUSE, stays as it was.

// PauseUndoable is Pause, with a function that undoes only this Pause:
// if every pool was paused already, the pools resumed out of that pause
// by name are resumed again; otherwise the pause of every pool ends,
// leaving the pools paused by name paused.
func (p *Proxy) PauseUndoable() (undo func(), err error) {
	p.pauseMu.Lock()
	wasAll, resumed := p.pauseAll, p.resumedBy
	p.pauseMu.Unlock()
	if err := p.Pause(); err != nil {
		return nil, err
	}
	return func() {
		p.pauseMu.Lock()
		if wasAll {
			p.resumedBy = resumed
		} else {
			p.pauseAll, p.resumedBy = false, nil
		}
		p.changedLocked()
		var open []string // pools the undo leaves unpaused
		for _, pl := range p.opts.Pools.All() {
			if !p.pausedLocked(pl.Name()) {
				open = append(open, pl.Name())
			}
		}
		p.pauseMu.Unlock()
		p.reopen(open)
	}, nil
}

// reopen lets the named pools refill MinIdle again (a PAUSE's Disconnect
// kept them closed) and hand out what their queued clients wait for.
func (p *Proxy) reopen(names []string) {
	for _, pl := range p.opts.Pools.All() {
		if slices.Contains(names, pl.Name()) {
			pl.Reopen()
		}
	}
	p.kick()
}

// PausePoolUndoable is PausePool, with a function that puts back the
// pool's state from before it: not paused by name if it was not, and
// resumed out of a pause of every pool if it was.
func (p *Proxy) PausePoolUndoable(name string) (undo func(), err error) {
	p.pauseMu.Lock()
	wasPaused, wasResumed := p.pausedBy[name], p.resumedBy[name]
	p.pauseMu.Unlock()
	if err := p.PausePool(name); err != nil {
		return nil, err
	}
	return func() {
		p.pauseMu.Lock()
		if !wasPaused {
			delete(p.pausedBy, name)
		}
		if wasResumed && p.pauseAll {
			if p.resumedBy == nil {
				p.resumedBy = make(map[string]bool)
			}
			p.resumedBy[name] = true
		}
		p.changedLocked()
		paused := p.pausedLocked(name)
		p.pauseMu.Unlock()
		if !paused {
			p.reopen([]string{name})
		}
	}, nil
}
