//! The two experiments that time batches of N operations and fit a line through the
//! totals: `query` (N sequential `SELECT 1` on one connection, in the simple,
//! extended or prepared protocol) and `rows` (one query
//! returning N rows, every value read). The slope is the cost of one more query or
//! row; the intercept the fixed cost of a batch.

use super::{Target, BATCH_LIMIT};
use crate::cpu::Meter;
use crate::harness::measure::nanos;
use crate::postgres::keys::*;
use crate::postgres::libpq::{PgConn, PgError, Protocol};
use crate::results::{Metrics, Point, Trial};
use crate::stats::Fit;
use anyhow::{bail, Context, Result};
use std::ffi::CString;
use std::time::Instant;

const SELECT_1: &std::ffi::CStr = c"SELECT 1";
/// The name `SELECT 1` is prepared under with `-M prepared`.
const STATEMENT: &std::ffi::CStr = c"sockbench_select_1";

/// One trial of `query`: a batch of N `SELECT 1` for each N in `counts`, sent with
/// `protocol` (prepared once on the connection, before the batches).
pub fn query_trial(
    target: &Target,
    counts: &[u64],
    protocol: Protocol,
    meter: &mut Meter,
) -> Result<Trial> {
    let conn = open(target)?;
    target.adopt_backend(&conn, &meter.server_side())?;
    if protocol == Protocol::Prepared {
        conn.prepare(STATEMENT, SELECT_1)?;
    }
    let once = |conn: &PgConn| match protocol {
        Protocol::Simple => conn.exec(SELECT_1),
        Protocol::Extended => conn.exec_params(SELECT_1, &[]),
        Protocol::Prepared => conn.exec_prepared(STATEMENT, &[]),
    };
    for _ in 0..200 {
        once(&conn)?;
    }
    let (points, fit) = fitted_batches(counts, "--queries", meter, |n| {
        let deadline = Instant::now() + BATCH_LIMIT;
        for i in 0..n {
            once(&conn)?;
            if i % 1024 == 1023 {
                crate::interrupt::check()?;
                if Instant::now() > deadline {
                    bail!("{n} queries took longer than {BATCH_LIMIT:?}");
                }
            }
        }
        Ok(())
    })?;
    Ok(trial(
        Metrics::default()
            .with(PER_QUERY_NS, Some(fit.slope))
            .with(QPS, Some(1e9 / fit.slope))
            .with(INTERCEPT_NS, Some(fit.intercept))
            .with(R2, Some(fit.r2)),
        counts,
        points,
    ))
}

/// One trial of `rows`: `SELECT * FROM generate_series(1,N)` for each N in
/// `counts`, every value parsed by the client.
pub fn rows_trial(target: &Target, counts: &[u64], meter: &mut Meter) -> Result<Trial> {
    let conn = open(target)?;
    target.adopt_backend(&conn, &meter.server_side())?;
    let queries: Vec<CString> = counts
        .iter()
        .map(|n| CString::new(format!("SELECT * FROM generate_series(1,{n})")))
        .collect::<Result<_, _>>()?;
    read_series(
        &conn,
        &CString::new("SELECT * FROM generate_series(1,1000)")?,
        1000,
    )?;
    let mut sums = vec![0u64; counts.len()];
    let (points, fit) = fitted_batches(counts, "--rows", meter, |n| {
        let i = counts.iter().position(|&c| c == n).unwrap_or(0);
        sums[i] = read_series(&conn, &queries[i], n)?;
        Ok(())
    })?;
    for (&n, &sum) in counts.iter().zip(&sums) {
        if sum != n * (n + 1) / 2 {
            bail!("generate_series(1,{n}) came back with the wrong values (sum {sum})");
        }
    }
    Ok(trial(
        Metrics::default()
            .with(PER_ROW_NS, Some(fit.slope))
            .with(ROWS_PER_S, Some(1e9 / fit.slope))
            .with(INTERCEPT_NS, Some(fit.intercept))
            .with(R2, Some(fit.r2)),
        counts,
        points,
    ))
}

/// Runs the query and adds up every value, as a client using the rows would read them.
fn read_series(conn: &PgConn, sql: &CString, expected: u64) -> Result<u64, PgError> {
    let result = conn.exec(sql)?;
    let rows = result.rows();
    if rows as u64 != expected {
        return Err(PgError::Query(format!(
            "expected {expected} rows, got {rows}"
        )));
    }
    let mut sum = 0u64;
    for row in 0..rows {
        let digits = result.value(row, 0).unwrap_or_default();
        sum += digits
            .iter()
            .fold(0u64, |v, d| v * 10 + u64::from(d.wrapping_sub(b'0')));
    }
    Ok(sum)
}

fn open(target: &Target) -> Result<PgConn> {
    PgConn::connect(&target.params).with_context(|| format!("cannot connect over {}", target.label))
}

/// Times `batch(n)` once per count, in order, and fits a line through the totals;
/// `meter` counts the batches' CPU, per operation of all of them.
/// When noise hides the growth with N (a slope of zero or less), the batches run again,
/// at most three times in all. A counting trial's fit is never used (only its counts
/// per operation are), so there any fit will do: its shorter batches
/// (`Budget::for_trial`) are the likelier to hide the growth.
fn fitted_batches(
    counts: &[u64],
    flag: &str,
    meter: &mut Meter,
    mut batch: impl FnMut(u64) -> Result<()>,
) -> Result<(Vec<Point>, Fit)> {
    for _ in 0..3 {
        let mut points = Vec::with_capacity(counts.len());
        meter.start();
        for &n in counts {
            let start = Instant::now();
            batch(n)?;
            let total_ns = nanos(start.elapsed());
            points.push(Point { n, total_ns });
        }
        meter.stop(counts.iter().sum());
        let xy: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.n as f64, p.total_ns as f64))
            .collect();
        if let Some(fit) = Fit::of(&xy).filter(|f| f.slope > 0.0 || meter.counting()) {
            return Ok((points, fit));
        }
    }
    bail!(
        "three times the total time did not grow with N: the counts are too small to rise \
         above the noise; give larger ones with {flag}"
    )
}

fn trial(metrics: Metrics, counts: &[u64], points: Vec<Point>) -> Trial {
    let total: u64 = points.iter().map(|p| p.total_ns).sum();
    Trial {
        metrics: metrics.with(POINTS, points),
        count: counts.iter().sum(),
        elapsed_ns: total,
        ..Trial::default()
    }
}
