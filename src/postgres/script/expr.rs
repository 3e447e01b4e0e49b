//! pgbench's `\set` expressions, the integer part: literals, `:name`, unary minus,
//! `+ - * / %` with C's precedence and truncation, parentheses and `random(a, b)`.
//! Parsed once when the script is loaded; evaluating one walks the tree and touches
//! no allocator, so it may run in the concurrent experiment's loop.

use super::rng::Rng;

/// A parsed expression; variables are slots in the client's value array.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Int(i64),
    Var(usize),
    Neg(Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
    Random(Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl Expr {
    /// The value, or pgbench's reason for giving none.
    pub fn eval(&self, vars: &[i64], rng: &mut Rng) -> Result<i64, &'static str> {
        const RANGE: &str = "bigint out of range";
        Ok(match self {
            Expr::Int(v) => *v,
            Expr::Var(slot) => vars[*slot],
            Expr::Neg(e) => e.eval(vars, rng)?.checked_neg().ok_or(RANGE)?,
            Expr::Binary(op, a, b) => {
                let (a, b) = (a.eval(vars, rng)?, b.eval(vars, rng)?);
                match op {
                    Op::Add => a.checked_add(b).ok_or(RANGE)?,
                    Op::Sub => a.checked_sub(b).ok_or(RANGE)?,
                    Op::Mul => a.checked_mul(b).ok_or(RANGE)?,
                    Op::Div if b == 0 => return Err("division by zero"),
                    Op::Rem if b == 0 => return Err("division by zero"),
                    Op::Div => a.checked_div(b).ok_or(RANGE)?,
                    // As pgbench: the one overflowing case has remainder 0.
                    Op::Rem => a.checked_rem(b).unwrap_or(0),
                }
            }
            Expr::Random(a, b) => {
                let (a, b) = (a.eval(vars, rng)?, b.eval(vars, rng)?);
                if a > b {
                    return Err("empty range given to random");
                }
                rng.between(a, b)
            }
        })
    }
}

/// The longest expression and the deepest nesting of parentheses taken: parsing,
/// evaluating and dropping recurse, so a bound keeps them within any thread's stack
/// (pgbench's expressions are a line long).
const MAX_BYTES: usize = 512;
const MAX_NESTING: usize = 32;

/// Parses `text`; `slot` finds a variable's slot by name (`None`: not defined yet).
pub fn parse(text: &str, slot: &dyn Fn(&str) -> Option<usize>) -> Result<Expr, String> {
    if text.len() > MAX_BYTES {
        return Err(format!(
            "the expression is {} bytes long; use at most {MAX_BYTES}",
            text.len()
        ));
    }
    let mut depth = 0usize;
    for b in text.bytes() {
        match b {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_NESTING {
            return Err(format!("parentheses nest deeper than {MAX_NESTING} levels"));
        }
    }
    let mut p = ExprParser {
        text: text.as_bytes(),
        at: 0,
        slot,
    };
    let e = p.sum()?;
    p.skip_space();
    match p.peek() {
        None => Ok(e),
        Some(_) => Err(format!("unexpected '{}'", p.rest())),
    }
}

struct ExprParser<'a> {
    text: &'a [u8],
    at: usize,
    slot: &'a dyn Fn(&str) -> Option<usize>,
}

impl ExprParser<'_> {
    fn skip_space(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn rest(&self) -> String {
        String::from_utf8_lossy(&self.text[self.at..])
            .trim()
            .to_string()
    }

    /// The next byte after spaces, taken when it is `c`.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        let found = self.peek() == Some(c);
        if found {
            self.at += 1;
        }
        found
    }

    fn word(&mut self) -> &str {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.at += 1;
        }
        std::str::from_utf8(&self.text[start..self.at]).unwrap_or("")
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut e = self.product()?;
        loop {
            let op = if self.eat(b'+') {
                Op::Add
            } else if self.eat(b'-') {
                Op::Sub
            } else {
                return Ok(e);
            };
            e = Expr::Binary(op, Box::new(e), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        loop {
            let op = if self.eat(b'*') {
                Op::Mul
            } else if self.eat(b'/') {
                Op::Div
            } else if self.eat(b'%') {
                Op::Rem
            } else {
                return Ok(e);
            };
            e = Expr::Binary(op, Box::new(e), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat(b'-') {
            return Ok(match self.unary()? {
                Expr::Int(v) => Expr::Int(-v),
                e => Expr::Neg(Box::new(e)),
            });
        }
        if self.eat(b'+') {
            return self.unary();
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        self.skip_space();
        if self.eat(b'(') {
            let e = self.sum()?;
            return if self.eat(b')') {
                Ok(e)
            } else {
                Err("a ')' is missing".into())
            };
        }
        if self.eat(b':') {
            let name = self.word().to_string();
            if name.is_empty() {
                return Err("':' must be followed by a variable name".into());
            }
            return (self.slot)(&name)
                .map(Expr::Var)
                .ok_or_else(|| format!("variable ':{name}' is not set before this line"));
        }
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let digits = self.word().to_string();
                if self.peek() == Some(b'.') || digits.contains(['e', 'E']) {
                    return Err(format!(
                        "'{digits}…' is not an integer; only integer arithmetic is supported"
                    ));
                }
                digits
                    .parse()
                    .map(Expr::Int)
                    .map_err(|_| format!("'{digits}' is not an integer in range"))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let name = self.word().to_ascii_lowercase();
                if name != "random" {
                    return Err(format!(
                        "'{name}' is not supported; only integer arithmetic (+ - * / %), \
                         parentheses and random(a, b)"
                    ));
                }
                if !self.eat(b'(') {
                    return Err("random needs its arguments: random(a, b)".into());
                }
                let a = self.sum()?;
                if !self.eat(b',') {
                    return Err("random takes two arguments: random(a, b)".into());
                }
                let b = self.sum()?;
                if !self.eat(b')') {
                    return Err("random takes two arguments: random(a, b)".into());
                }
                Ok(Expr::Random(Box::new(a), Box::new(b)))
            }
            Some(_) => Err(format!("unexpected '{}'", self.rest())),
            None => Err("the expression ends too early".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Result<i64, String> {
        let slot = |n: &str| (n == "scale").then_some(0);
        let e = parse(text, &slot)?;
        e.eval(&[3], &mut Rng::new(1)).map_err(str::to_string)
    }

    #[test]
    fn integer_arithmetic_as_in_c() {
        assert_eq!(value("1 + 2 * 3").unwrap(), 7);
        assert_eq!(value("(1 + 2) * 3").unwrap(), 9);
        assert_eq!(value("100000 * :scale").unwrap(), 300_000);
        assert_eq!(value("-7 / 2").unwrap(), -3);
        assert_eq!(value("-7 % 3").unwrap(), -1);
        assert_eq!(value("- (2 - 5)").unwrap(), 3);
        assert_eq!(value("10 - 2 - 3").unwrap(), 5);
        assert_eq!(value("1 / 0").unwrap_err(), "division by zero");
        assert_eq!(
            value("9223372036854775807 + 1").unwrap_err(),
            "bigint out of range"
        );
    }

    #[test]
    fn long_or_deep_expressions_are_refused_not_a_stack_overflow() {
        let slot = |_: &str| None;
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(parse(&deep, &slot).unwrap_err().contains("nest deeper"));
        let long = vec!["1"; 30_000].join("+");
        assert!(parse(&long, &slot).unwrap_err().contains("at most 512"));
        let ok = format!("{}1{}", "(".repeat(32), ")".repeat(32));
        assert!(parse(&ok, &slot).is_ok());
    }

    #[test]
    fn random_stays_within_its_inclusive_range() {
        let slot = |_: &str| None;
        let e = parse("random(1, 3)", &slot).unwrap();
        let mut rng = Rng::new(7);
        let mut seen = [0u32; 3];
        for _ in 0..3_000 {
            let v = e.eval(&[], &mut rng).unwrap();
            seen[(v - 1) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
        let e = parse("random(5, 4)", &slot).unwrap();
        assert!(e.eval(&[], &mut rng).is_err());
    }

    #[test]
    fn what_is_not_supported_is_named() {
        assert!(value("abs(-1)").unwrap_err().contains("'abs'"));
        assert!(value("1.5").unwrap_err().contains("integer"));
        assert!(value(":nope + 1").unwrap_err().contains(":nope"));
        assert!(value("(1 + 2").unwrap_err().contains(")"));
        assert!(value("1 +").is_err());
    }
}
