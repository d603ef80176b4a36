package storage

import "time"

// The background flusher of the page-cache mode (Options.Fsync off) runs
// only when there is something to sync: nothing per partition exists or
// ticks while a partition is idle, so a node with many quiet partitions
// costs no wake-ups and no goroutines for them.
//
//   - An append that takes the unsynced messages or bytes to a threshold
//     starts a flush goroutine unless one runs (startFlushLocked); that
//     goroutine syncs, and syncs again while appends made meanwhile have
//     reached a threshold again, then exits.
//   - The first unsynced append after a sync arms a one-shot timer of
//     Options.FlushInterval (armFlushTimerLocked); when it fires and data
//     is still unsynced, it flushes. Unsynced data therefore waits at most
//     FlushInterval, as with a ticker, but an idle partition has no timer.
//
// The state (flushing, timer, timerArmed) is guarded by Partition.mu; the
// flush goroutines and timer callbacks are counted in Partition.wg.

// thresholdLocked reports whether the unsynced data has reached a flush
// threshold. Caller must hold p.mu.
func (p *Partition) thresholdLocked() bool {
	return p.pendMsgs >= p.opts.FlushMessages || p.pendBytes >= p.opts.FlushBytes
}

// startFlushLocked reports whether the caller must run a flush goroutine
// (go p.flushRun()) once it released p.mu: false when one already runs or
// the partition is closed. Caller must hold p.mu.
func (p *Partition) startFlushLocked() bool {
	if p.flushing || p.closed {
		return false
	}
	p.flushing = true
	p.wg.Add(1)
	return true
}

// armFlushTimerLocked arms the interval timer unless it is armed, a
// flush runs (it re-arms when it leaves data behind) or the interval is
// disabled. Caller must hold p.mu.
func (p *Partition) armFlushTimerLocked() {
	if p.timerArmed || p.flushing || p.closed || p.opts.FlushInterval <= 0 {
		return
	}
	p.timerArmed = true
	if p.timer == nil {
		p.timer = time.AfterFunc(p.opts.FlushInterval, p.flushTimer)
		return
	}
	p.timer.Reset(p.opts.FlushInterval)
}

// flushTimer runs when the interval timer fires: it flushes what is still
// unsynced.
func (p *Partition) flushTimer() {
	p.mu.Lock()
	p.timerArmed = false
	run := p.pendMsgs > 0 && p.startFlushLocked()
	p.mu.Unlock()
	if run {
		p.flushRun()
	}
}

// flushRun syncs until no threshold is reached any more, then re-arms
// the timer if data is left unsynced. It was counted in p.wg by
// startFlushLocked.
func (p *Partition) flushRun() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		target := p.appended
		p.mu.Unlock()
		// A failure is sticky in p.failed and reported to appenders.
		_ = p.syncTo(target)
		if p.afterFlush != nil {
			p.afterFlush()
		}
		p.mu.Lock()
		again := !p.closed && p.failed == nil && p.thresholdLocked()
		if !again {
			p.flushing = false
			if p.failed == nil && p.pendMsgs > 0 {
				p.armFlushTimerLocked()
			}
		}
		p.mu.Unlock()
		if !again {
			return
		}
	}
}

// stopFlusherLocked disarms the interval timer; Close then waits for a
// running flush in p.wg. Caller must hold p.mu with p.closed set.
func (p *Partition) stopFlusherLocked() {
	if p.timer != nil && p.timer.Stop() {
		p.timerArmed = false
	}
}
