//! The verdict's rules: three outcomes, figures that reproduce the percentage, TLS
//! apart from tcp, whether it matters at typical rates, and what the run could not
//! see.

use super::*;
use crate::cpu::{Cost, Counts};
use crate::harness::aggregate::record;
use crate::report::block::Block;
use crate::report::experiment::{OwnLine, Pick, Said};
use crate::results::metric::{Better, Metric, Unit};
use crate::results::paired::pair;
use crate::results::{Metrics, Params, Trial};

const TIME: Metric = Metric::new("per_query_ns", Unit::Time, Better::Lower);
const PER_QUERY: crate::results::Key<f64> = crate::results::Key::new("per_query_ns");

static FAKE: Description = Description {
    id: "fake.query",
    title: "a fake query",
    chart_title: "Time per fake query",
    headline: TIME,
    figures: &[TIME],
    budgets: &[],
    cases: &[],
    table: |_| Block::facts("", Vec::new(), Vec::new()),
    charts: &[],
    verdict: Some(VerdictLine {
        counted: None,
        rank: 1,
        case: Pick::Only,
        what: |_| "a query".into(),
        metric: TIME,
        work: Work {
            heading: "Short queries",
            op: "query",
            ops: "queries",
            kind: WorkKind::Requests,
            typical: &[100.0, 1_000.0, 10_000.0],
            pool_against: None,
        },
    }),
    own_line: None,
};

/// Trials that took these times, round by round, each costing `cpu` ns of CPU.
fn trials(values: &[f64], cpu: f64) -> Vec<Trial> {
    values
        .iter()
        .map(|&v| Trial {
            metrics: {
                let mut m = Metrics::default().with(PER_QUERY, v);
                m.cpu = Some(Cost {
                    source: crate::cpu::counters::CountedBy::Proc,
                    ..Cost::of_client(cpu)
                });
                m
            },
            count: 1,
            ..Trial::default()
        })
        .collect()
}

/// Records of these transports whose trials took these times, round by round.
fn measured(placement: Option<&str>, each: &[(&str, &[f64], f64)]) -> Vec<ResultRecord> {
    let params = Params::default().with(
        crate::results::params::PLACEMENT,
        placement.map(|p| p.parse::<crate::cpu::affinity::Placement>().unwrap()),
    );
    let mut rs: Vec<ResultRecord> = each
        .iter()
        .map(|(t, values, cpu)| record(FAKE.id, &TIME, &params, t, trials(values, *cpu), None))
        .collect();
    pair(&mut rs, &TIME);
    rs
}

fn records(placement: Option<&str>, unix: &[f64], tcp: &[f64]) -> Vec<ResultRecord> {
    measured(placement, &[("unix", unix, 100.0), ("tcp", tcp, 100.0)])
}

/// The verdict's sentences after its first, "In short", which `in_short_*` tests.
fn verdict(records: &[ResultRecord]) -> Vec<String> {
    let all = sentences(&lines(records, &System::default(), &Catalog::new([&FAKE])));
    all.into_iter()
        .filter(|s| !s.starts_with("In short"))
        .collect()
}

#[test]
fn in_short_comes_first_and_sums_up_each_outcome() {
    let rs = measured(
        None,
        &[
            ("unix", &[100.0, 101.0, 99.0, 100.0], 100.0),
            ("tcp", &[130.5, 131.2, 129.3, 130.4], 100.0),
            ("tls", &[300.0, 305.0, 298.0, 301.0], 100.0),
        ],
    );
    let all = sentences(&lines(&rs, &System::default(), &Catalog::new([&FAKE])));
    assert_eq!(
        all[0],
        "In short: the Unix socket was faster for short queries; TLS added time to every \
         kind of work it was measured on."
    );
}

#[test]
fn a_difference_names_the_choice_and_figures_that_reproduce_it() {
    // The machine swings 2x between rounds; tcp stays 28% slower in every one.
    let v = verdict(&records(
        None,
        &[10_000.0, 20_000.0, 10_000.0],
        &[12_800.0, 25_600.0, 12_800.0],
    ));
    assert!(
        v[0].starts_with("Short queries (a query): use the Unix socket"),
        "{v:?}"
    );
    // Geometric means 12.6 µs and 16.1 µs: 16.1 / 12.6 = 1.28; the interval is
    // only the 1% between runs (stats::interval::BETWEEN_RUNS), times t(2) = 4.30.
    assert!(
        v[0].contains("unix 12.6 µs, tcp 16.1 µs; tcp +28% [+23%, +34%]"),
        "{v:?}"
    );
    assert!(v[0].contains("3.53 µs less per query than tcp"), "{v:?}");
}

#[test]
fn an_interval_that_holds_zero_and_is_wide_is_not_settled_and_says_how_to_settle() {
    // The medians differ by 10%, but round by round tcp is as often faster.
    let v = verdict(&records(
        None,
        &[100.0, 100.0, 100.0],
        &[94.0, 203.0, 110.0],
    ));
    // [−53%, +252%] is wider than any printed interval may be (stats::interval::WIDEST).
    assert!(
        v[0].contains(
            "not settled — too few rounds to tell tcp from unix (3 rounds, which vary too \
             much for more to settle it)"
        ),
        "{v:?}"
    );
    assert!(!v[0].contains('['), "{v:?}");
    assert!(
        v[1].starts_with("1 of 1 comparisons are not settled; 1 varies too much"),
        "{v:?}"
    );
    assert!(!v[0].contains("does not matter"), "{v:?}");
}

#[test]
fn an_interval_within_five_percent_is_the_same_not_a_shrug() {
    let v = verdict(&records(
        None,
        &[100.0, 200.0, 150.0, 120.0],
        &[101.0, 199.0, 151.0, 121.0],
    ));
    assert!(
        v[0].contains("the transport does not matter — unix and tcp are the same within ±5%"),
        "{v:?}"
    );
    // A real but small difference is the same for any practical purpose.
    let small = verdict(&records(
        None,
        &[100.0, 101.0, 99.0, 100.0],
        &[100.5, 101.2, 99.3, 100.4],
    ));
    assert!(small[0].contains("are the same within ±5%"), "{small:?}");
    // Its interval is mostly the 1% between runs, times t(3) = 3.18.
    assert!(small[0].contains("tcp +0.4% [−2.8%, +3.6%]"), "{small:?}");
}

#[test]
fn whether_it_matters_comes_from_the_extra_cpu_at_typical_rates() {
    // tcp costs 10 µs more CPU per query: 0.1% of a core at 100/s, 1% at 1,000/s.
    let rs = measured(
        None,
        &[
            ("unix", &[20_000.0, 21_000.0, 20_500.0], 20_000.0),
            ("tcp", &[30_000.0, 31_000.0, 30_500.0], 30_000.0),
        ],
    );
    let v = verdict(&rs);
    assert!(
        v[0].contains(
            "at 1,000 queries/s its extra CPU (10.0 [10.0, 10.0] µs per query, client and \
             server) is 1.0% of a core; at 100/s (0.1%) it does not matter"
        ),
        "{v:?}"
    );
}

#[test]
fn an_extra_cpu_not_told_from_zero_is_weighed_against_no_rate() {
    // Round by round tcp costs 8 µs more CPU, then 2 µs less, then 9 µs more: the
    // mean 5 µs would be 5% of a core at 10,000/s, but the rounds cannot tell it
    // from nothing, and the line does not claim a share of a core.
    let rs = measured(
        None,
        &[
            ("unix", &[20_000.0, 21_000.0, 20_500.0], 20_000.0),
            ("tcp", &[30_000.0, 31_000.0, 30_500.0], 20_000.0),
        ],
    );
    let mut rs = rs;
    for (t, extra) in rs[1].trials.iter_mut().zip([8_000.0, -2_000.0, 9_000.0]) {
        if let Some(cpu) = t.metrics.cpu.as_mut() {
            cpu.client.cpu_ns += extra;
        }
    }
    crate::results::paired::pair(&mut rs, &TIME);
    let v = verdict(&rs);
    assert!(
        v[0].contains("is not told from zero: the difference adds latency"),
        "{v:?}"
    );
    assert!(!v[0].contains("of a core"), "{v:?}");
}

#[test]
fn a_real_difference_under_one_percent_of_a_core_is_either_is_fine_not_use() {
    // tcp costs 0.5 µs more CPU per query: 0.5% of a core even at 10,000/s.
    let rs = measured(
        None,
        &[
            ("unix", &[20_000.0, 21_000.0, 20_500.0], 20_000.0),
            ("tcp", &[30_000.0, 31_000.0, 30_500.0], 20_500.0),
        ],
    );
    let v = verdict(&rs);
    assert!(
        v[0].starts_with("Short queries (a query): either is fine: the Unix socket is faster"),
        "{v:?}"
    );
    assert!(!v[0].contains("use the Unix socket"), "{v:?}");
    assert!(
        v[0].contains(
            "even at 10,000 queries/s its extra CPU (500 [500, 500] ns per query, \
                       client and server) is 0.5% of a core"
        ),
        "{v:?}"
    );
    // 0.998% prints as 1.0%: it counts, so the line does not call it negligible.
    let edge = measured(
        None,
        &[
            ("unix", &[20_000.0, 21_000.0, 20_500.0], 20_000.0),
            ("tcp", &[30_000.0, 31_000.0, 30_500.0], 20_998.0),
        ],
    );
    let v = verdict(&edge);
    assert!(v[0].contains("is 1.0% of a core;"), "{v:?}");
    assert!(
        !v[0].contains("1.0% of a core: it does not matter"),
        "{v:?}"
    );
    assert!(v[0].contains("use the Unix socket"), "{v:?}");
}

#[test]
fn tls_is_compared_with_tcp_apart_from_unix_against_tcp() {
    let rs = measured(
        None,
        &[
            ("unix", &[100.0, 101.0, 99.0, 100.0], 100.0),
            ("tcp", &[100.5, 101.2, 99.3, 100.4], 100.0),
            ("tls", &[300.0, 305.0, 298.0, 301.0], 100.0),
        ],
    );
    let v = verdict(&rs);
    // TLS's large numbers do not make unix and tcp differ.
    assert!(
        v[0].contains("unix and tcp are the same within ±5%"),
        "{v:?}"
    );
    assert!(
        v[0].contains("TLS adds 201 ns per query over tcp (tcp 100 ns, tls 301 ns;"),
        "{v:?}"
    );
}

#[test]
fn placement_that_changes_the_answer_is_said() {
    let mut rs = records(Some("same"), &[100.0, 101.0, 99.0], &[100.0, 102.0, 99.0]);
    rs.extend(records(
        Some("split"),
        &[100.0, 101.0, 99.0],
        &[160.0, 162.0, 158.0],
    ));
    let v = verdict(&rs);
    assert!(
        v[0].starts_with("Short queries (a query, on one CPU): "),
        "{v:?}"
    );
    assert!(
        v[1].starts_with("Short queries (a query, on two CPUs): "),
        "{v:?}"
    );
    assert!(
        v[1].contains("Placement changes the answer here: tcp +0.3%"),
        "{v:?}"
    );
    assert!(v[1].contains("on one CPU, +60%"), "{v:?}");
}

#[test]
fn reruns_stopped_at_the_time_limit_are_said_in_the_busy_line() {
    let mut rs = records(None, &[100.0, 101.0, 99.0], &[130.0, 131.0, 129.0]);
    rs[0].trials[0].reruns = 2;
    rs[0].trials[0].disturbed = true;
    rs[1].trials[1].reruns = 1;
    rs[1].trials[1].disturbed = true;
    rs[1].trials[1].cut = true;
    let v = verdict(&rs);
    let busy = v
        .iter()
        .find(|s| s.starts_with("The host was busy: 2 of 6 trials ran again"))
        .unwrap_or_else(|| panic!("{v:?}"));
    assert!(
        busy.contains("1 of them kept with fewer tries: reruns stopped at the time limit"),
        "{busy}"
    );
    rs[1].trials[1].cut = false;
    let v = verdict(&rs);
    assert!(!v.iter().any(|s| s.contains("time limit")), "{v:?}");
}

#[test]
fn a_busy_host_and_free_placement_are_said_after_the_lines() {
    let mut rs = records(None, &[100.0, 101.0, 99.0], &[130.0, 131.0, 129.0]);
    rs[0].trials[1].reruns = 1;
    rs[1].trials[2].disturbed = true;
    // The server's process was found (its CPU counted): it can be pinned.
    for t in rs.iter_mut().flat_map(|r| &mut r.trials) {
        t.metrics.cpu.as_mut().unwrap().server = Some(Counts::default());
    }
    let v = verdict(&rs);
    assert!(
        v.iter().any(
            |s| s.starts_with("The host was busy: 1 of 6 trials ran again")
                && s.contains("1 still disturbed")
        ),
        "{v:?}"
    );
    assert!(
        v.iter().any(|s| s.contains("--placement same,split")),
        "{v:?}"
    );
    assert!(v.last().unwrap().starts_with("How to read it"), "{v:?}");
}

#[test]
fn one_transport_alone_gives_no_verdict() {
    let rs = measured(None, &[("unix", &[100.0, 101.0], 1.0)]);
    assert!(verdict(&rs).is_empty());
}

/// An experiment with no line comparing transports, but one of its own: how many
/// records it has, and what the other fake experiment's records are; before that
/// experiment's line by rank.
static OWN: Description = Description {
    id: "fake.own",
    title: "a fake with its own line",
    chart_title: "a fake with its own line",
    headline: TIME,
    figures: &[TIME],
    budgets: &[],
    cases: &[],
    table: |_| Block::facts("", Vec::new(), Vec::new()),
    charts: &[],
    verdict: None,
    own_line: Some(OwnLine {
        rank: 0,
        heading: "Own words",
        says: |run| {
            let (own, other) = (run.of(&OWN), run.of(&FAKE));
            (!own.is_empty()).then(|| Said {
                case: "its case".into(),
                says: format!("{} records, {} of the other", own.len(), other.len()),
            })
        },
    }),
};

/// An experiment with no line at all.
static SILENT: Description = Description {
    id: "fake.silent",
    verdict: None,
    own_line: None,
    ..OWN
};

/// Records of `experiment` over `transports`, at `placement`.
fn of(experiment: &Description, placement: Option<&str>, transports: &[&str]) -> Vec<ResultRecord> {
    let params = Params::default().with(
        crate::results::params::PLACEMENT,
        placement.map(|p| p.parse::<crate::cpu::affinity::Placement>().unwrap()),
    );
    transports
        .iter()
        .map(|t| {
            record(
                experiment.id,
                &TIME,
                &params,
                t,
                trials(&[100.0, 101.0], 1.0),
                None,
            )
        })
        .collect()
}

#[test]
fn an_own_line_takes_its_place_by_rank_once_per_placement() {
    let mut rs = records(Some("same"), &[100.0, 101.0, 99.0], &[130.0, 131.0, 129.0]);
    rs.extend(of(&OWN, Some("same"), &["unix", "tcp"]));
    rs.extend(of(&OWN, Some("split"), &["unix"]));
    let all = lines(&rs, &System::default(), &Catalog::new([&FAKE, &OWN]));
    let said: Vec<&str> = all.iter().map(|l| l.sentence.as_str()).collect();
    assert!(
        said[0].starts_with("In short: the Unix socket was faster"),
        "{said:?}"
    );
    // Rank 0 before the other's 1; each placement its own line, with its words,
    // and the records of that placement alone.
    assert_eq!(
        said[1],
        "Own words (its case, on one CPU): 2 records, 2 of the other."
    );
    assert_eq!(
        said[2],
        "Own words (its case, on two CPUs): 1 records, 0 of the other."
    );
    assert!(said[3].starts_with("Short queries (a query, on one CPU): use the Unix"));
    // No comparison of transports: "In short", the chart and the count of
    // comparisons not settled leave it out.
    assert!(all[1].pairs.is_empty() && all[1].ratios.is_empty() && !all[1].caveat);
    // Alone, it is the verdict.
    let alone = lines(
        &of(&OWN, None, &["unix"]),
        &System::default(),
        &Catalog::new([&OWN]),
    );
    assert_eq!(
        alone[0].sentence,
        "Own words (its case): 1 records, 0 of the other."
    );
}

#[test]
fn an_own_line_is_on_the_page_and_in_the_terminal_as_it_is_in_the_verdict() {
    use crate::export::Exporter;
    let rs = of(&OWN, None, &["unix", "tcp"]);
    let verdict = lines(&rs, &System::default(), &Catalog::new([&OWN]));
    let document = crate::report::Document {
        title: "t".into(),
        sections: vec![crate::report::Section {
            heading: "run.json".into(),
            summary: sentences(&verdict),
            verdict,
            blocks: Vec::new(),
        }],
    };
    let said = "Own words (its case): 2 records, 0 of the other.";
    let page = crate::export::html::Html.render(&document);
    assert!(page.contains(&format!("<li>{said}</li>")), "{page}");
    let screen = crate::export::terminal::Screen::plain(200);
    let terminal = crate::export::terminal::Terminal(screen).render(&document);
    assert!(terminal.contains(said), "{terminal}");
    let text = text(&document.sections[0].verdict, &rs, &Catalog::new([&OWN]));
    assert!(text.contains(said), "{text}");
}

#[test]
fn a_run_without_a_line_says_why() {
    let none = |rs: &[ResultRecord], catalog: &Catalog| {
        let verdict = lines(rs, &System::default(), catalog);
        assert!(verdict.is_empty(), "{verdict:?}");
        text(&verdict, rs, catalog)
    };
    // Measured on two transports, but with no line in the verdict: not "measured
    // one".
    let catalog = Catalog::new([&FAKE, &SILENT]);
    assert_eq!(
        none(&of(&SILENT, None, &["unix", "tcp"]), &catalog),
        "Verdict: none. fake.silent has no line in the verdict: its table says what was \
         measured.\n"
    );
    let one = of(&FAKE, None, &["unix"]);
    assert_eq!(
        none(&one, &catalog),
        "Verdict: none. A verdict compares transports, and no experiment here measured two \
         or more.\n"
    );
    let mut both = one;
    both.extend(of(&SILENT, None, &["unix", "tcp"]));
    assert_eq!(
        none(&both, &catalog),
        "Verdict: none. A verdict compares transports, and no experiment here with a line \
         in it measured two or more (fake.silent has none).\n"
    );
}
