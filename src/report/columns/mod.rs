//! Builds the rows of a table laid out like a lab notebook: a column per transport,
//! a row per measurement. Figures stand alone (`97.4 µs`, `602 MB/s`); the one
//! comparison is the row under the headline, the time per operation against the
//! reference transport, paired round by round with its 95% interval
//! (`+57% [+41%, +75%]`, or `24× [19×, 30×]` for a large one).
//!
//! Architecture Invariant: a table prints one kind of relative figure, that row;
//! no other percentage is set beside a figure (an earlier percentage against the
//! fastest column disagreed with it).
//!
//! The rows of CPU per operation are laid out in `cost.rs`, the kernel's account
//! of why (events per operation, CPU by layer) in `kernel.rs`; the notes on how to
//! read a table and how sure it is, where CPU figures come from among them, are in
//! `notes.rs`, re-exported here.

mod cost;
pub(crate) mod kernel;
mod notes;

use notes::legend_with_tls;
pub use notes::{certainty_notes, legend, shared_cpu};

use super::block::{Block, Cell, Number, Row};
use super::experiment::Description;
use super::format::{duration_interval_ns, figure, versus};
use crate::results::metric::Unit;
use crate::results::paired::reference;
use crate::results::ResultRecord;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;

/// Reads one latency figure of a record's percentiles.
pub type LatencyOf = fn(&crate::stats::Percentiles) -> f64;

/// The tail rows most tables show under a latency: its median and tails.
pub const TAILS: [(&str, LatencyOf); 3] = [
    ("  p50", |p| p.p50),
    ("  p99", |p| p.p99),
    ("  p99.9", |p| p.p999),
];

/// Rows being built over a fixed set of transport columns.
pub struct Columns {
    labels: Vec<String>,
    /// Each label's column.
    column: HashMap<String, usize>,
    pub rows: Vec<Row>,
}

/// A figure's cell: its text and its number in `unit`.
pub fn figure_cell(unit: Unit, value: f64) -> Cell {
    Cell::with(figure(unit, value), Number::Figure { value, unit })
}

impl Columns {
    /// One column per transport, in the order the records first name them.
    pub fn of(records: &[ResultRecord]) -> Columns {
        let labels = distinct(records, |r| r.transport.clone());
        let column = (labels.iter().enumerate())
            .map(|(i, l)| (l.clone(), i))
            .collect();
        Columns {
            labels,
            column,
            rows: Vec::new(),
        }
    }

    /// The header: the row-name column, then the transports.
    pub fn header(&self, first: &str) -> Vec<String> {
        std::iter::once(first.to_string())
            .chain(self.labels.iter().cloned())
            .collect()
    }

    /// The block of `experiment`'s `records` with these rows laid out under a
    /// "measurement" column: its notes say what is not settled, its legend how to
    /// read the figures and the TLS negotiated. A family with notes of its own adds
    /// them to the block.
    pub fn into_block(self, experiment: &'static Description, records: &[ResultRecord]) -> Block {
        Block {
            header: self.header("measurement"),
            rows: self.rows,
            notes: certainty_notes(records),
            legend: legend_with_tls(records),
            ..Block::experiment(experiment, records)
        }
    }

    /// The records of `group`, placed in their transport's column.
    pub fn place<'r>(&self, group: &[&'r ResultRecord]) -> Vec<Option<&'r ResultRecord>> {
        let mut cells = vec![None; self.labels.len()];
        for &r in group {
            if let Some(&i) = self.column.get(&r.transport) {
                cells[i].get_or_insert(r);
            }
        }
        cells
    }

    /// A row of one figure in `unit` per column, `-` where a column has none. A row
    /// with no figure at all is left out.
    pub fn line(
        &mut self,
        label: &str,
        cells: &[Option<&ResultRecord>],
        unit: Unit,
        get: impl Fn(&ResultRecord) -> Option<f64>,
    ) {
        self.cells(label, cells, |r| get(r).map(|v| figure_cell(unit, v)));
    }

    /// A row of a number without a unit (a fit's R²), shown by `format`.
    pub fn plain(
        &mut self,
        label: &str,
        cells: &[Option<&ResultRecord>],
        format: fn(f64) -> String,
        get: impl Fn(&ResultRecord) -> Option<f64>,
    ) {
        self.cells(label, cells, |r| get(r).map(|v| Cell::text(format(v))));
    }

    /// A row of one cell per column made by `cell`, `-` where it makes none. A row
    /// with no cell at all is left out.
    pub fn cells(
        &mut self,
        label: &str,
        cells: &[Option<&ResultRecord>],
        cell: impl Fn(&ResultRecord) -> Option<Cell>,
    ) {
        let row: Vec<Option<Cell>> = cells.iter().map(|c| c.and_then(&cell)).collect();
        if row.iter().all(Option::is_none) {
            return;
        }
        let row = row.into_iter().map(|c| c.unwrap_or_else(Cell::missing));
        self.rows.push(Row::new(label, row.collect()));
    }

    /// The comparison with the reference transport (for TLS, with tcp: the label
    /// says so), paired by round, with its 95% interval: `+28% [+19%, +37%]`,
    /// `24× [19×, 30×]`; then the extra CPU per operation of the same comparison.
    /// Left out when nothing was compared.
    pub fn versus(&mut self, cells: &[Option<&ResultRecord>]) {
        let labels: Vec<&str> = cells
            .iter()
            .flatten()
            .map(|r| r.transport.as_str())
            .collect();
        let Some(reference) = labels.get(reference(&labels)).map(|l| l.to_string()) else {
            return;
        };
        let compared: Vec<&ResultRecord> = cells
            .iter()
            .flatten()
            .copied()
            .filter(|r| r.headline.vs_reference.is_some())
            .collect();
        if compared.is_empty() {
            return;
        }
        let aside: Vec<String> = compared
            .iter()
            .filter_map(|r| {
                let v = r.headline.vs_reference.as_ref()?;
                (v.reference != reference).then(|| format!("{}: {}", r.transport, v.reference))
            })
            .collect();
        let ratio = |r: &ResultRecord| -> Option<Cell> {
            let v = r.headline.vs_reference.as_ref()?;
            Some(Cell::with(versus(&v.ratio), Number::Ratio(v.ratio)))
        };
        let extra = |r: &ResultRecord| -> Option<Cell> {
            let d = r.headline.vs_reference.as_ref()?.extra_cpu_ns?;
            let text = duration_interval_ns(d.estimate, d.low, d.high);
            Some(Cell::with(
                text,
                Number::Figure {
                    value: d.estimate,
                    unit: Unit::Time,
                },
            ))
        };
        let with_reference = |cell: &dyn Fn(&ResultRecord) -> Option<Cell>| -> Vec<Cell> {
            cells
                .iter()
                .map(|c| match c {
                    Some(r) if r.transport == reference => Cell::text("reference"),
                    Some(r) => cell(r).unwrap_or_else(Cell::missing),
                    None => Cell::missing(),
                })
                .collect()
        };
        let label = if aside.is_empty() {
            format!("  vs {reference}, 95% CI")
        } else {
            format!("  vs {reference} ({}), 95% CI", aside.join(", "))
        };
        self.rows.push(Row::new(&label, with_reference(&ratio)));
        // The same comparisons' extra CPU, client and server together.
        if compared.iter().any(|r| extra(r).is_some()) {
            self.rows
                .push(Row::new("  extra CPU/op, 95% CI", with_reference(&extra)));
        }
    }

    /// The headline's min–max over trials, marked `~` when noisy, then the
    /// comparison with the reference transport.
    pub fn range(&mut self, label: &str, cells: &[Option<&ResultRecord>], unit: Unit) {
        let mut row = Vec::new();
        for c in cells {
            row.push(c.map_or("-".into(), |r| {
                let s = &r.headline.spread;
                let mark = if r.headline.noisy { " ~" } else { "" };
                format!("{}–{}{mark}", figure(unit, s.min), figure(unit, s.max))
            }));
        }
        self.rows.push(Row::texts(label, row));
        self.certainty(cells);
    }

    /// The rows that say how sure and how costly the headline is: the comparison
    /// with the reference, then CPU per operation.
    pub fn certainty(&mut self, cells: &[Option<&ResultRecord>]) {
        self.versus(cells);
        self.cost(cells);
        self.why(cells);
    }
}

/// The distinct values of one parameter, in the order the records first show them.
/// Each record is looked at once (a file may hold many cases: comparing each with
/// every other would take the square of their number).
pub fn distinct<'r, T: Eq + Hash + Clone>(
    records: impl IntoIterator<Item = &'r ResultRecord>,
    get: impl Fn(&ResultRecord) -> T,
) -> Vec<T> {
    let mut seen = HashSet::new();
    let mut values = Vec::new();
    for r in records {
        let v = get(r);
        if seen.insert(v.clone()) {
            values.push(v);
        }
    }
    values
}

/// The records grouped by one parameter, each group with its value, in the order
/// the records first show them; each record is looked at once, as in [`distinct`].
pub fn groups<T: Eq + Hash + Clone>(
    records: &[ResultRecord],
    get: impl Fn(&ResultRecord) -> T,
) -> Vec<(T, Vec<&ResultRecord>)> {
    let mut index: HashMap<T, usize> = HashMap::new();
    let mut groups: Vec<(T, Vec<&ResultRecord>)> = Vec::new();
    for r in records {
        let v = get(r);
        match index.get(&v) {
            Some(&i) => groups[i].1.push(r),
            None => {
                index.insert(v.clone(), groups.len());
                groups.push((v, vec![r]));
            }
        }
    }
    groups
}

/// The records whose parameter equals `value`.
pub fn having<'r, T: PartialEq>(
    records: &'r [ResultRecord],
    get: impl Fn(&ResultRecord) -> T,
    value: &T,
) -> Vec<&'r ResultRecord> {
    records.iter().filter(|r| &get(r) == value).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::aggregate::record;
    use crate::results::metric::{Better, Metric};
    use crate::results::paired::pair;
    use crate::results::{Metrics, Params, Trial};

    const RATE: Metric = Metric::new("ops_per_s", Unit::Rate, Better::Higher);
    const OPS: crate::results::Key<f64> = crate::results::Key::new("ops_per_s");

    /// Records of unix, tcp and tls whose rounds ran at these rates.
    fn records(rates: [&[f64]; 3]) -> Vec<ResultRecord> {
        let trials = |values: &[f64]| -> Vec<Trial> {
            values
                .iter()
                .map(|&v| Trial {
                    metrics: Metrics::default().with(OPS, v),
                    count: 1,
                    ..Trial::default()
                })
                .collect()
        };
        let params = Params::default();
        let mut rs: Vec<ResultRecord> = ["unix", "tcp", "tls"]
            .iter()
            .zip(rates)
            .map(|(t, r)| record("fake.ops", &RATE, &params, t, trials(r), None))
            .collect();
        pair(&mut rs, &RATE);
        rs
    }

    #[test]
    fn figures_stand_alone_with_their_numbers_and_one_row_compares() {
        let rs = records([
            &[2.0e9, 2.1e9, 2.2e9],
            &[1.0e9, 1.1e9, 1.2e9],
            &[8.0e7, 9.0e7, 1.0e8],
        ]);
        let mut table = Columns::of(&rs);
        let cells = table.place(&rs.iter().collect::<Vec<_>>());
        table.line("throughput", &cells, Unit::ByteRate, |r| r.metrics.get(OPS));
        table.line("nothing", &cells, Unit::Time, |_| None);
        table.versus(&cells);
        assert_eq!(table.rows.len(), 2, "a row with no figure is left out");
        let figures = &table.rows[0].cells;
        // No percentage against the fastest column beside a figure.
        let texts: Vec<&str> = figures.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["2.10 GB/s", "1.10 GB/s", "90.0 MB/s"]);
        assert_eq!(
            figures[1].value,
            Some(Number::Figure {
                value: 1.1e9,
                unit: Unit::ByteRate
            })
        );
        // The comparison reads as time per operation: tcp takes about twice the
        // time of unix, never "+253%" beside a slower rate; tls, compared with
        // tcp as everywhere and named so, 12 times tcp's.
        let versus = &table.rows[1];
        assert_eq!(versus.label, "vs unix (tls: tcp), 95% CI");
        assert!(versus.sub);
        assert_eq!(versus.cells[0].text, "reference");
        assert!(versus.cells[1].text.starts_with("+91% ["), "{versus:?}");
        assert!(versus.cells[2].text.starts_with("12× ["), "{versus:?}");
        assert!(matches!(versus.cells[2].value, Some(Number::Ratio(r)) if r.estimate > 10.0));
    }

    #[test]
    fn a_missing_figure_is_a_dash() {
        let rs = records([&[1.0, 2.0], &[1.0, 2.0], &[1.0, 2.0]]);
        let mut table = Columns::of(&rs);
        let cells = table.place(&rs.iter().collect::<Vec<_>>());
        table.line("only tcp", &cells, Unit::Rate, |r| {
            (r.transport == "tcp").then_some(1500.0)
        });
        assert_eq!(table.rows[0].cells[0], Cell::missing());
        assert_eq!(table.rows[0].cells[1].text, "1.50k/s");
    }

    /// A case key that counts how often two keys are compared.
    #[derive(Debug, Clone)]
    struct Counted(u64);

    thread_local! {
        static COMPARED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    impl PartialEq for Counted {
        fn eq(&self, other: &Counted) -> bool {
            COMPARED.set(COMPARED.get() + 1);
            self.0 == other.0
        }
    }

    impl Eq for Counted {}

    impl std::hash::Hash for Counted {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            self.0.hash(state);
        }
    }

    const SIZE: crate::results::Key<u64> = crate::results::Key::new("size");

    /// Records of `cases` cases, each over unix and tcp, in that order.
    fn many_cases(cases: u64) -> Vec<ResultRecord> {
        let trial = Trial {
            metrics: Metrics::default().with(OPS, 1000.0),
            count: 1,
            ..Trial::default()
        };
        (0..cases)
            .flat_map(|case| {
                let params = Params::default().with(SIZE, case);
                ["unix", "tcp"]
                    .map(|t| record("fake.ops", &RATE, &params, t, vec![trial.clone()], None))
            })
            .collect()
    }

    /// A file may hold thousands of cases: finding them, and the records of each,
    /// looks at each record once instead of comparing every case with every other
    /// (work that grew with the square of their number).
    #[test]
    fn cases_are_told_apart_without_comparing_each_with_every_other() {
        let cases = 2000;
        let rs = many_cases(cases);
        let case = |r: &ResultRecord| Counted(r.params.get(SIZE).unwrap_or(0));
        COMPARED.set(0);
        let found = distinct(&rs, case);
        assert_eq!(found.len(), cases as usize);
        assert!(found.iter().enumerate().all(|(i, c)| c.0 == i as u64));
        // Each record's key is compared with the one equal to it, about once.
        assert!(COMPARED.get() <= rs.len(), "{} comparisons", COMPARED.get());

        COMPARED.set(0);
        let grouped = groups(&rs, case);
        assert!(COMPARED.get() <= rs.len(), "{} comparisons", COMPARED.get());
        assert_eq!(grouped.len(), cases as usize);
        let table = Columns::of(&rs);
        for (i, (key, group)) in grouped.iter().enumerate() {
            assert_eq!(key.0, i as u64);
            let transports: Vec<&str> = table
                .place(group)
                .iter()
                .map(|c| c.map_or("-", |r| r.transport.as_str()))
                .collect();
            assert_eq!(transports, ["unix", "tcp"]);
        }
    }
}
