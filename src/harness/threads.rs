//! Clients on threads of their own, for the experiments that run many at once.

use anyhow::{anyhow, Result};

/// Runs `work(0) … work(n - 1)` on `n` scoped threads and returns their results in
/// that order, or the first error (a panicking thread counts as one).
pub fn on_threads<T: Send>(n: usize, work: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
    on_threads_while(n, work, || {})
}

/// The same, with `meanwhile` run on the calling thread while the others work.
pub fn on_threads_while<T: Send>(
    n: usize,
    work: impl Fn(usize) -> Result<T> + Sync,
    meanwhile: impl FnOnce(),
) -> Result<Vec<T>> {
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n).map(|i| scope.spawn(move || work(i))).collect();
        meanwhile();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a client thread panicked")))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order() {
        let got = on_threads(4, |i| Ok(i * 10)).unwrap();
        assert_eq!(got, [0, 10, 20, 30]);
    }

    #[test]
    fn an_error_or_a_panic_fails_the_whole() {
        let err = on_threads(3, |i| if i == 1 { Err(anyhow!("no")) } else { Ok(i) });
        assert_eq!(err.unwrap_err().to_string(), "no");
        let panicked = on_threads(2, |i| -> Result<usize> {
            assert!(i == 0, "client {i} fails");
            Ok(i)
        });
        assert!(panicked.unwrap_err().to_string().contains("panicked"));
    }
}
