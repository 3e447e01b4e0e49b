//! How an experiment describes itself, once: its id in result files, its title, its
//! headline figure, the parameters that tell its cases apart, its table, its charts
//! and its verdict line. Each server family declares a static [`Description`] per
//! experiment; the report, charts, verdict and comparison iterate a [`Catalog`] of
//! them instead of knowing any experiment by name.

use super::block::Block;
pub use super::verdict::own::{Placed, Said};
use crate::cpu::affinity::Placement;
use crate::results::metric::Declared;
use crate::results::metric::Metric;
use crate::results::params::{Param, PLACEMENT};
use crate::results::{Key, Params, Point, ResultRecord};
use crate::units::format_size;

/// A family and its plan live in `family.rs`; they are named here too, where they
/// were declared before.
pub use super::family::{Family, Plan};

/// One experiment, as the report and its formats see it.
pub struct Description {
    /// The id in result files, `family.name` (e.g. `sockets.pingpong`). Compared with
    /// a record's `experiment` only in [`Catalog::find`].
    pub id: &'static str,
    /// What it does, for table titles.
    pub title: &'static str,
    /// What its headline bars show, in words a person reads, for chart titles.
    pub chart_title: &'static str,
    /// The figure tables lead with.
    pub headline: Metric,
    /// Every figure its records hold that the report or the loader reads (units,
    /// directions, which may be below zero), the headline among them.
    pub figures: &'static [Metric],
    /// The parameters that make one case of it differ from another, as labels show
    /// them.
    pub cases: &'static [CaseParam],
    /// Parameters that set how long or how much it measured, not what: two runs may
    /// choose them differently and still be compared (durations, batch sizes). Every
    /// other parameter makes a different measurement.
    pub budgets: &'static [&'static str],
    /// Lays out its records as a table.
    pub table: fn(&[ResultRecord]) -> Block,
    /// Its charts besides the headline bars every experiment gets.
    pub charts: &'static [Chart],
    /// Its line in the verdict, if it has one.
    pub verdict: Option<VerdictLine>,
    /// A line it makes itself, for what one figure compared between transports
    /// cannot say, if it has one.
    pub own_line: Option<OwnLine>,
}

impl Description {
    /// The family that declares it: its id's part before the dot.
    pub fn family(&self) -> &'static str {
        self.id
            .split_once('.')
            .map_or(self.id, |(family, _)| family)
    }

    /// The case `params` describe, in words: `64 B`, `10 clients, connection per
    /// transaction`, `md5`; empty for an experiment of one case.
    pub fn case_label(&self, params: &Params) -> String {
        let mut parts: Vec<String> = self.cases.iter().filter_map(|c| c.label(params)).collect();
        parts.extend(placement(params).map(|p| p.describe().to_string()));
        parts.join(", ")
    }

    /// What the loader needs to know of it.
    pub fn declared(&self) -> Declared {
        Declared {
            headline: self.headline,
            figures: self.figures,
            budgets: self.budgets,
        }
    }

    /// The parameters that make `params` a different measurement from another's:
    /// all but its budgets.
    pub fn case_of(&self, params: &Params) -> Params {
        params.without(self.budgets)
    }
}

/// The placement the parameters name, when `--placement` chose one.
pub fn placement(params: &Params) -> Option<Placement> {
    params.get(PLACEMENT)
}

impl std::fmt::Debug for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id)
    }
}

impl PartialEq for Description {
    fn eq(&self, other: &Description) -> bool {
        self.id == other.id
    }
}

impl Eq for Description {}

impl std::hash::Hash for Description {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

/// A parameter that tells cases apart, declared by its family as data: its name
/// in the result file, its type of value and how it is written in labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaseParam {
    /// Its name in the record's `params` (the family's [`crate::results::Key`]).
    pub name: &'static str,
    pub form: Form,
    /// Its row label, `{}` standing for the value: `{} clients`, `{} writes`; for a
    /// flag, the whole label.
    pub label: &'static str,
    /// The row label when the value is 1, if it reads differently (`1 client`).
    pub one: Option<&'static str>,
    /// Its chart label, `{}` standing for the value: `{} cl.`, `×{}`; none for a
    /// parameter charts leave out.
    pub short: Option<&'static str>,
}

/// How a case parameter's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A number of bytes: `64 B`, `1 MiB`.
    Size,
    /// A plain number.
    Number,
    /// A word.
    Text,
    /// A flag, shown only when on.
    Flag,
}

impl CaseParam {
    /// A parameter written as `label` with `{}` for its value, the same in charts.
    pub const fn new(name: &'static str, form: Form, label: &'static str) -> CaseParam {
        CaseParam {
            name,
            form,
            label,
            one: None,
            short: Some(label),
        }
    }

    /// The same, written `one` when the value is 1.
    pub const fn one(self, one: &'static str) -> CaseParam {
        CaseParam {
            one: Some(one),
            ..self
        }
    }

    /// The same, written `short` in charts (`None`: left out of charts).
    pub const fn short(self, short: Option<&'static str>) -> CaseParam {
        CaseParam { short, ..self }
    }

    /// The parameter as a number, for the ones that are numbers.
    pub fn number(self, p: &Params) -> Option<u64> {
        match (self.form, p.value(self.name)?) {
            (Form::Size | Form::Number, Param::Number(n)) => Some(*n),
            _ => None,
        }
    }

    /// The value in words, before it goes into a label: `64 B`, `10`, `md5`.
    fn value(self, p: &Params) -> Option<String> {
        match (self.form, p.value(self.name)?) {
            (Form::Size, Param::Number(n)) => Some(format_size(*n)),
            (Form::Number, Param::Number(n)) => Some(n.to_string()),
            (Form::Text, Param::Text(t)) => Some(t.clone()),
            (Form::Flag, Param::Flag(true)) => Some(String::new()),
            _ => None,
        }
    }

    /// The parameter in a comparison's row label: `64 B`, `1 MiB writes`,
    /// `10 clients`, `scram-sha-256`, `connection per transaction`.
    pub fn label(self, p: &Params) -> Option<String> {
        let value = self.value(p)?;
        let template = match self.one {
            Some(one) if self.number(p) == Some(1) => one,
            _ => self.label,
        };
        Some(template.replace("{}", &value))
    }

    /// The parameter in a chart's short label: `64 B`, `10 cl.`, `md5`.
    pub fn short_label(self, p: &Params) -> Option<String> {
        Some(self.short?.replace("{}", &self.value(p)?))
    }
}

/// A chart an experiment draws besides its headline bars.
#[derive(Debug, Clone, Copy)]
pub enum Chart {
    /// A line per transport of `y` against a numeric case parameter; drawn only when
    /// that parameter takes more than one value.
    Lines {
        title: &'static str,
        x: CaseParam,
        x_desc: &'static str,
        y: Metric,
        log_x: bool,
    },
    /// The total time of every timed batch against its N (each trial's `points`),
    /// with each transport's least-squares line (the headline is its slope,
    /// `intercept` its fixed cost); `n` names what N counts.
    Fitted {
        n: &'static str,
        points: Key<Vec<Point>>,
        intercept: Metric,
    },
}

/// An experiment's line in the verdict.
#[derive(Debug, Clone, Copy)]
pub struct VerdictLine {
    /// Where the line goes: smaller first (everyday work first, bulk work last).
    pub rank: u8,
    /// The case the line is about, when there are several.
    pub case: Pick,
    /// What the line is about, from the parameters of the picked case (its reference
    /// transport's record).
    pub what: fn(&Params) -> String,
    pub metric: Metric,
    /// The kind of work the line speaks for, and how it speaks of it.
    pub work: Work,
    /// The operation CPU time and the kernel's events are counted per, from the
    /// picked case's parameters (`64 KiB write`), where it is not one of
    /// `work.op` (a byte of a stream); `None`: per `work.op`.
    pub counted: Option<fn(&Params) -> String>,
}

impl VerdictLine {
    /// What CPU time and events are counted per in the case with `params`.
    pub fn cpu_op(&self, params: &Params) -> String {
        self.counted
            .map_or_else(|| self.work.op.to_string(), |per| per(params))
    }
}

/// A verdict line an experiment makes itself, from the run's records, where the
/// generic line (one figure, one case, each transport against the reference) would
/// say something false or nothing: the share of requests that failed (one transport
/// may fail none, so no ratio), what a layer costs over the same work without it
/// (two experiments, not paired round by round). `verdict::own` gives it the
/// records, names the placement, and offers the statements such lines are made of
/// (`verdict::failed`, `Pair::unpaired` and `words::layer_cost`), so a family writes
/// only what is its own: which records, and what its numbers mean.
#[derive(Debug, Clone, Copy)]
pub struct OwnLine {
    /// Where the line goes among the others, as [`VerdictLine::rank`].
    pub rank: u8,
    /// How the line starts: `nginx past its app server's backlog`.
    pub heading: &'static str,
    /// What the line says of the run's records at one placement, or nothing when
    /// they do not hold what it needs.
    pub says: fn(&Placed) -> Option<Said>,
}

/// The kind of work a verdict line answers for: what it is called, what one
/// operation is, and at which rates an application typically does it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    /// How the line starts: `Short queries`, `New connections`.
    pub heading: &'static str,
    /// One operation, and several: `query`, `queries`.
    pub op: &'static str,
    pub ops: &'static str,
    pub kind: WorkKind,
    /// Rates (per second) at which applications typically do this work; the line
    /// says what the difference costs in CPU at each.
    pub typical: &'static [f64],
    /// For new connections: the experiment of one request on a kept connection, to
    /// say how many requests a connection costs.
    pub pool_against: Option<&'static Description>,
}

/// How a verdict line reads its figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkKind {
    /// One request at a time on a kept connection: time per operation.
    Requests,
    /// A new connection each time: time per connection; a pool is the first answer
    /// when a connection costs many requests.
    Connections,
    /// Many clients at once: operations per second.
    Clients,
    /// Bulk work: a rate, and whether the difference stays there.
    Bulk,
}

/// Which case a verdict line is about.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    /// The only one.
    Only,
    /// The one with the smallest value of the parameter.
    Smallest(CaseParam),
    /// The one with the largest value of the parameter.
    Largest(CaseParam),
    /// Every case, each against the first measured, on the reference transport: the
    /// line compares the cases (e.g. authentication methods), not transports.
    Cases(CaseParam),
}

/// Every experiment this sockbench knows, from the registered server families,
/// and the servers they measure.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    experiments: Vec<&'static Description>,
    servers: Vec<ServerName>,
}

/// A family that measures a server of its own kind, and what the system facts call
/// that server (`PostgreSQL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerName {
    pub family: &'static str,
    pub product: &'static str,
}

impl Catalog {
    pub fn new(experiments: impl IntoIterator<Item = &'static Description>) -> Catalog {
        Catalog {
            experiments: experiments.into_iter().collect(),
            servers: Vec::new(),
        }
    }

    /// The catalog that also names the servers its families measure.
    pub fn with_servers(self, servers: impl IntoIterator<Item = ServerName>) -> Catalog {
        Catalog {
            servers: servers.into_iter().collect(),
            ..self
        }
    }

    /// Every experiment, in the order the families declare them.
    pub fn all(&self) -> &[&'static Description] {
        &self.experiments
    }

    /// The servers the families measure, in their order.
    pub fn servers(&self) -> &[ServerName] {
        &self.servers
    }

    /// The experiment a result file names `id`: the one place an id is read.
    pub fn find(&self, id: &str) -> Option<&'static Description> {
        self.experiments.iter().copied().find(|e| e.id == id)
    }

    /// The experiment of a record.
    pub fn of(&self, record: &ResultRecord) -> Option<&'static Description> {
        self.find(&record.experiment)
    }

    /// The family that measured a record (`sockets`, `postgres`, `redis`), for an
    /// experiment the catalog knows.
    pub fn family_of(&self, record: &ResultRecord) -> Option<&'static str> {
        self.of(record).map(Description::family)
    }

    /// The records of `experiment` among `records`.
    pub fn records_of<'r>(
        &self,
        records: &'r [ResultRecord],
        experiment: &Description,
    ) -> Vec<&'r ResultRecord> {
        records
            .iter()
            .filter(|r| self.of(r) == Some(experiment))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::block::Block;
    use crate::results::metric::{Better, Unit};
    use crate::results::Key;

    const SIZE: Key<u64> = Key::new("size");
    const SCRIPT: Key<String> = Key::new("script");
    const DURATION: Key<u64> = Key::new("duration_ms");
    const CLIENTS: Key<u64> = Key::new("clients");
    const BY_SIZE: CaseParam = CaseParam::new(SIZE.name, Form::Size, "{} values");
    const BY_CLIENTS: CaseParam = CaseParam::new(CLIENTS.name, Form::Number, "{} clients")
        .one("1 client")
        .short(Some("{} cl."));
    const TIME: Metric = Metric::new("rtt_ns.p50", Unit::Time, Better::Lower);

    static FAKE: Description = Description {
        id: "fake.get",
        title: "a fake",
        chart_title: "a fake",
        headline: TIME,
        figures: &[TIME],
        cases: &[BY_SIZE, BY_CLIENTS],
        budgets: &[DURATION.name],
        table: |_| Block::facts("", Vec::new(), Vec::new()),
        charts: &[],
        verdict: None,
        own_line: None,
    };

    #[test]
    fn a_case_is_every_parameter_but_the_budgets() {
        let a = Params::default().with(SIZE, 64).with(DURATION, 150);
        let longer = Params::default().with(SIZE, 64).with(DURATION, 500);
        assert_eq!(
            FAKE.case_of(&a),
            FAKE.case_of(&longer),
            "a budget does not split cases"
        );
        // A parameter nobody listed still tells cases apart.
        let scripted = a.clone().with(SCRIPT, "mine.sql".to_string());
        assert_ne!(FAKE.case_of(&a), FAKE.case_of(&scripted));
    }

    #[test]
    fn case_parameters_are_labelled_as_declared() {
        let p = Params::default().with(SIZE, 4096).with(CLIENTS, 1);
        assert_eq!(FAKE.case_label(&p), "4 KiB values, 1 client");
        assert_eq!(
            BY_CLIENTS
                .short_label(&p.clone().with(CLIENTS, 10))
                .as_deref(),
            Some("10 cl.")
        );
        assert_eq!(BY_SIZE.number(&p), Some(4096));
        assert_eq!(FAKE.case_label(&Params::default()), "");
    }
}
