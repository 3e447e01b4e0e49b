//! `sockbench sockets`: the raw transport experiments, end to end.
//!
//! Starts (or finds) the server, then runs each workload trial by trial. Within a
//! trial every transport runs once per parameter set, interleaved, and the transport
//! that goes first rotates from trial to trial, so slow drift in the machine (heat,
//! another tenant) spreads over all transports instead of landing on one.

use super::Session;
use crate::cli::SocketsArgs;
use crate::experiment::{records, Target, Workload};
use crate::export::json::Claim;
use crate::interrupt;
use crate::output::progress::Progress;
use crate::output::table;
use crate::plan::{ServerSource, SocketsPlan};
use crate::results::{ResultRecord, Trial};
use crate::server::child::ServerProcess;
use crate::units::format_size;
use anyhow::{Context, Result};

pub fn run(args: &SocketsArgs, argv: Vec<String>) -> Result<()> {
    let plan = SocketsPlan::from_args(args)?;
    let json = plan.json.as_deref().map(|p| (p, Claim::Replace));
    let mut session = Session::open(json, argv, args.quiet)?;
    let outcome = measure(&plan, &mut session);
    session.finish(outcome)
}

/// Runs every workload of the plan, saving each into the session as it finishes.
pub fn measure(plan: &SocketsPlan, session: &mut Session) -> Result<()> {
    session.progress.note("sockets: starting the server");
    let (_server, endpoints) = match &plan.server {
        ServerSource::Spawn(transports) => {
            let server = ServerProcess::start(transports)?;
            let endpoints = server.endpoints().to_vec();
            (Some(server), endpoints)
        }
        ServerSource::Running(endpoints) => (None, endpoints.clone()),
    };
    let targets = endpoints
        .into_iter()
        .map(|e| Target::new(e, plan.tls_version))
        .collect::<Result<Vec<_>>>()?;
    let tls: Vec<_> = targets
        .iter()
        .map(Target::tls_info)
        .collect::<Result<_>>()?;

    for &workload in &plan.workloads {
        let progress = session.progress.clone();
        let records = run_workload(plan, workload, &targets, &tls, &progress);
        session.keep(records, |r| table::block(workload, r).to_terminal())?;
    }
    Ok(())
}

/// Runs every trial of one workload and builds its records.
fn run_workload(
    plan: &SocketsPlan,
    workload: Workload,
    targets: &[Target],
    tls: &[Option<crate::transport::TlsInfo>],
    progress: &Progress,
) -> Result<Vec<ResultRecord>> {
    let cases = plan.cases(workload);
    let steps = plan.trials as usize * cases.len() * targets.len();
    progress.begin(workload.experiment(), steps as u64);
    // trials[case][target]
    let mut trials: Vec<Vec<Vec<Trial>>> = vec![vec![Vec::new(); targets.len()]; cases.len()];
    for trial in 0..plan.trials {
        for (c, params) in cases.iter().enumerate() {
            for k in 0..targets.len() {
                let t = (k + trial as usize) % targets.len();
                let target = &targets[t];
                interrupt::check()?;
                progress.step(format!(
                    "{}{} trial {}/{}",
                    case_label(params),
                    target.transport,
                    trial + 1,
                    plan.trials
                ));
                let result = workload
                    .run(target, params, &plan.budget)
                    .with_context(|| {
                        format!(
                            "{} over {} failed in trial {}",
                            workload.experiment(),
                            target.transport,
                            trial + 1
                        )
                    })?;
                // A signal during the last trial must not pass for a finished one.
                interrupt::check()?;
                trials[c][t].push(result);
            }
        }
    }
    let mut records = Vec::new();
    for (params, per_target) in cases.iter().zip(trials) {
        for ((target, trials), tls) in targets.iter().zip(per_target).zip(tls) {
            records.push(records::record(
                &workload,
                params,
                target.transport.name(),
                trials,
                tls.clone(),
            ));
        }
    }
    records::rank(&mut records);
    Ok(records)
}

fn case_label(params: &crate::results::Params) -> String {
    match (params.size, params.write_size, params.clients) {
        (Some(size), _, _) | (_, Some(size), _) => format!("{} ", format_size(size)),
        (_, _, Some(clients)) => format!("{clients} clients "),
        _ => String::new(),
    }
}
