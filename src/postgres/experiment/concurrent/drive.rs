//! One client thread: opens its clients, then keeps each busy (or, with a rate, busy
//! when a transaction is due) until the window ends. Nothing here allocates once the
//! clients are open: the script's texts and parameters are written into buffers each
//! client sized when it was made.

use super::schedule::{Live, Throttle};
use super::{RunSpec, ThreadTally, Window};
use crate::cpu::placed::ServerSide;
use crate::harness::measure::nanos;
use crate::postgres::experiment::Target;
use crate::postgres::libpq::{wait_any, PgConn, Protocol, Step, TxOutcome, Wait, OP_LIMIT};
use crate::postgres::script::{Bindings, Rng, Statement};
use anyhow::{anyhow, bail, Context, Result};
use std::ffi::{c_char, CString};
use std::time::{Duration, Instant};

/// One client connection and where its transaction stands.
struct ClientConn {
    conn: Option<PgConn>,
    state: TxState,
    /// When the transaction started, or with a rate when it was due.
    started: Instant,
    /// When the last command (or the connection) was sent.
    sent: Instant,
    /// How long after it was due the transaction started (zero without a rate).
    lag: Duration,
    /// Whether the connection holds the script's prepared statements.
    prepared: bool,
    bindings: Bindings,
}

#[derive(Clone, Copy, PartialEq)]
enum TxState {
    Idle,
    Connecting(Step),
    /// Preparing the script's command i (`-M prepared`).
    Preparing(usize),
    Running(usize),
}

/// What a thread works with.
pub struct Thread<'a> {
    target: &'a Target,
    /// Where the backends of a user's server go.
    side: &'a ServerSide,
    load: &'a RunSpec,
    /// The prepared statements' names, one per command.
    names: &'a [CString],
    window: Window,
    rng: Rng,
    schedule: Option<Throttle>,
    /// Parameter pointers of the command being sent.
    pointers: Vec<*const c_char>,
    live: Option<&'a Live>,
    tally: ThreadTally,
}

impl<'a> Thread<'a> {
    pub fn new(
        target: &'a Target,
        load: &'a RunSpec,
        names: &'a [CString],
        window: Window,
        index: u64,
        live: Option<&'a Live>,
        side: &'a ServerSide,
    ) -> Thread<'a> {
        let threads = f64::from(load.threads.clamp(1, load.clients));
        // A new seed every trial, as pgbench's default `--random-seed=time`: rounds
        // sample different keys and arrival times instead of repeating one draw.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Thread {
            target,
            side,
            load,
            names,
            window,
            rng: Rng::new(seed ^ 0x5eed),
            schedule: load
                .rate
                .map(|r| Throttle::new(r / threads, window.start, seed ^ 0x7a7e)),
            pointers: vec![std::ptr::null(); load.script.most_vars()],
            live,
            tally: ThreadTally::new(load.script.commands.len()),
        }
    }

    /// Runs `clients` clients numbered from `first_id` until the window ends.
    pub fn run(mut self, clients: u32, first_id: u32) -> Result<ThreadTally> {
        let start = self.window.start;
        let mut all: Vec<ClientConn> = (0..clients)
            .map(|i| {
                let conn = if self.load.connect_per_transaction {
                    None
                } else {
                    self.tally.connections += 1;
                    let conn = PgConn::connect(&self.target.params)?;
                    self.target.adopt_backend(&conn, self.side)?;
                    Some(conn)
                };
                Ok(ClientConn {
                    conn,
                    state: TxState::Idle,
                    started: start,
                    sent: start,
                    lag: Duration::ZERO,
                    prepared: false,
                    bindings: Bindings::new(&self.load.script, first_id + i),
                })
            })
            .collect::<Result<_>>()
            .context("cannot open the clients' connections")?;
        if self.schedule.is_some() {
            // The kernel may wake a timed wait up to 50 µs late by default ("timer
            // slack"), which would show as schedule lag: ask for 1 µs.
            // SAFETY: PR_SET_TIMERSLACK takes a plain number and changes only this
            // thread's timer slack.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        }
        let mut waits: Vec<Wait> = Vec::with_capacity(all.len());
        std::thread::sleep(start.saturating_duration_since(Instant::now()));
        let end = self.window.end;
        let mut stall_checked = start;
        loop {
            let now = Instant::now();
            // Checked once per wake-up (at most 100 ms apart), never per transaction.
            if now >= end || crate::interrupt::interrupted() {
                break;
            }
            if now - stall_checked >= Duration::from_secs(1) {
                stall_checked = now;
                check_stalls(&all, now)?;
            }
            let mut idle = false;
            for c in all.iter_mut().filter(|c| c.state == TxState::Idle) {
                if !self.begin(c, now)? {
                    idle = true;
                    break;
                }
            }
            waits.clear();
            waits.extend(all.iter().map(|c| {
                let write = c.state == TxState::Connecting(Step::Write);
                Wait::new(c.conn.as_ref(), write)
            }));
            let mut until = end.min(now + Duration::from_millis(100));
            if let (true, Some(s)) = (idle, &self.schedule) {
                until = until.min(s.next);
            }
            wait_any(&mut waits, until.saturating_duration_since(now))
                .map_err(|e| anyhow!("poll failed: {e}"))?;
            for i in 0..all.len() {
                if waits[i].ready() {
                    self.progress(&mut all[i])?;
                }
            }
        }
        Ok(self.tally)
    }

    /// Starts a client's next transaction, or with a rate, the next one due; false
    /// when none is due yet.
    fn begin(&mut self, c: &mut ClientConn, now: Instant) -> Result<bool> {
        c.started = now;
        if let Some(s) = &mut self.schedule {
            loop {
                if s.next > now {
                    return Ok(false);
                }
                c.started = s.next;
                s.advance();
                let late = now - c.started;
                let counted = c.started >= self.window.measured_from;
                if self.load.latency_limit.is_some_and(|limit| late > limit) {
                    // Due so long ago it would be late before it starts: skipped,
                    // as pgbench -R -L does.
                    self.tally.skipped += u64::from(counted);
                    continue;
                }
                if counted {
                    self.tally.lag.saturating_record(nanos(late));
                }
                break;
            }
        }
        c.sent = now;
        c.lag = now - c.started;
        if self.load.connect_per_transaction || c.conn.is_none() {
            c.conn = Some(PgConn::start(&self.target.params)?);
            c.prepared = false;
            c.state = TxState::Connecting(Step::Write);
            Ok(true)
        } else {
            self.send(c, 0)?;
            Ok(true)
        }
    }

    /// Sends command `i` of the script (preparing the statements first on a new
    /// connection with `-M prepared`).
    fn send(&mut self, c: &mut ClientConn, i: usize) -> Result<()> {
        let script = &self.load.script;
        let conn = c.conn.as_ref().context("no connection")?;
        c.sent = Instant::now();
        if self.load.protocol == Protocol::Prepared && !c.prepared {
            conn.send_prepare(&self.names[i], &script.commands[i].numbered)?;
            c.state = TxState::Preparing(i);
            return Ok(());
        }
        let command: &Statement = &script.commands[i];
        c.bindings
            .run(&command.sets, &mut self.rng)
            .map_err(|e| anyhow!("--script: {e}"))?;
        let n = command.vars.len();
        match self.load.protocol {
            Protocol::Simple if n == 0 => conn.send(&command.text)?,
            Protocol::Simple => conn.send(c.bindings.text(command))?,
            Protocol::Extended => {
                c.bindings.params(command, &mut self.pointers);
                conn.send_params(&command.numbered, &self.pointers[..n])?;
            }
            Protocol::Prepared => {
                c.bindings.params(command, &mut self.pointers);
                conn.send_prepared(&self.names[i], &self.pointers[..n])?;
            }
        }
        c.state = TxState::Running(i);
        Ok(())
    }

    /// Advances a client whose socket is ready.
    fn progress(&mut self, c: &mut ClientConn) -> Result<()> {
        let conn = c.conn.as_ref().context("no connection")?;
        match c.state {
            TxState::Idle => Ok(()),
            TxState::Connecting(_) => match conn.advance()? {
                // Counted once established: one the window's end cut short in its
                // handshake never became a session.
                Step::Ready => {
                    self.tally.connections += 1;
                    self.send(c, 0)
                }
                step => {
                    c.state = TxState::Connecting(step);
                    Ok(())
                }
            },
            TxState::Preparing(i) => match conn.receive()? {
                TxOutcome::Pending => Ok(()),
                TxOutcome::Failed => bail!(
                    "the server refused to prepare command {} of the script (a prepared \
                     statement is one SQL command: end each with ';' on its own line)",
                    i + 1
                ),
                TxOutcome::Succeeded if i + 1 < self.load.script.commands.len() => {
                    let next = &self.load.script.commands[i + 1].numbered;
                    conn.send_prepare(&self.names[i + 1], next)?;
                    c.state = TxState::Preparing(i + 1);
                    Ok(())
                }
                TxOutcome::Succeeded => {
                    c.prepared = true;
                    self.send(c, 0)
                }
            },
            TxState::Running(i) => match conn.receive()? {
                TxOutcome::Pending => Ok(()),
                outcome => {
                    let failed = outcome == TxOutcome::Failed;
                    let done = Instant::now();
                    let counted = self.window.counts(c.started, done);
                    if self.load.per_command && counted {
                        self.tally.command_ns[i] += nanos(done - c.sent);
                        self.tally.command_count[i] += 1;
                    }
                    if !failed && i + 1 < self.load.script.commands.len() {
                        return self.send(c, i + 1);
                    }
                    c.bindings
                        .run(&self.load.script.tail, &mut self.rng)
                        .map_err(|e| anyhow!("--script: {e}"))?;
                    if counted {
                        self.finished(c, done, failed);
                    }
                    // A failure inside a transaction block leaves the session
                    // aborted: the client connects anew rather than fail from then on.
                    if self.load.connect_per_transaction || (failed && !conn.idle()) {
                        c.conn = None;
                    }
                    c.state = TxState::Idle;
                    Ok(())
                }
            },
        }
    }

    /// Counts a transaction of the measured window.
    fn finished(&mut self, c: &ClientConn, done: Instant, failed: bool) {
        let latency = done - c.started;
        let t = &mut self.tally;
        if failed {
            t.failed += 1;
        } else {
            t.histogram.saturating_record(nanos(latency));
            if self.load.latency_limit.is_some_and(|limit| latency > limit) {
                t.late += 1;
            }
        }
        if let Some(live) = self.live {
            let lag = self.schedule.as_ref().map(|_| c.lag);
            live.finished(latency, lag, failed);
        }
    }
}

/// An error when a client has waited longer than [`OP_LIMIT`] for its server.
fn check_stalls(all: &[ClientConn], now: Instant) -> Result<()> {
    for c in all {
        if let (Some(conn), false) = (&c.conn, c.state == TxState::Idle) {
            if now - c.sent > OP_LIMIT {
                return Err(conn.stalled().into());
            }
        }
    }
    Ok(())
}
