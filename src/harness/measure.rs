//! What every timed loop uses: sample buffers sized and touched before the loop,
//! the clock's readings as nanoseconds, and rates.
//!
//! A timed loop follows one pattern: a sample buffer from [`sample_buffer`] sized
//! by [`sample_capacity`], the clock read once per operation (the end of one
//! operation is the start of the next), and a loop bounded by both a sample count
//! and a deadline. Nothing else happens inside.

use std::time::Duration;

/// Upper bound on operations per second any transport could reach; sizes sample
/// buffers so a timed loop never grows one.
const MAX_OPS_PER_S: f64 = 500_000.0;
/// Largest sample buffer one timed loop may take (8 bytes each).
const MAX_SAMPLES: usize = 4_000_000;

/// Sample buffer size for a loop of at most `budget` that does operations no faster
/// than [`MAX_OPS_PER_S`].
pub fn sample_capacity(budget: Duration) -> usize {
    ((budget.as_secs_f64() * MAX_OPS_PER_S) as usize).clamp(1_000, MAX_SAMPLES)
}

/// An empty sample buffer able to hold `capacity` samples, its pages already
/// touched so that the timed loop neither allocates nor takes page faults.
pub fn sample_buffer<T: Copy + Default>(capacity: usize) -> Vec<T> {
    let mut samples = Vec::with_capacity(capacity);
    samples
        .spare_capacity_mut()
        .fill(std::mem::MaybeUninit::new(T::default()));
    std::hint::black_box(&mut samples);
    samples
}

/// Nanoseconds of a duration, saturating.
#[inline]
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Operations per second.
pub fn rate(count: u64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 {
        0.0
    } else {
        count as f64 * 1e9 / elapsed_ns as f64
    }
}

/// The timed loop itself: `op` again and again until `samples` (from
/// [`sample_buffer`]) is full or `budget` has passed, one sample per operation in
/// nanoseconds, the clock read once per operation. Returns the loop's wall time, or
/// the first error `op` gives. `op` is inlined: nothing but it and the clock runs.
#[inline]
pub fn timed<E>(
    samples: &mut Vec<u64>,
    budget: Duration,
    mut op: impl FnMut() -> Result<(), E>,
) -> Result<u64, E> {
    let capacity = samples.capacity();
    let start = std::time::Instant::now();
    let deadline = start + budget;
    let mut prev = start;
    while samples.len() < capacity {
        op()?;
        let now = std::time::Instant::now();
        samples.push(nanos(now - prev));
        prev = now;
        if now >= deadline {
            break;
        }
    }
    Ok(nanos(prev - start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_loop_stops_at_its_capacity_its_deadline_or_an_error() {
        let mut samples = sample_buffer(1_000);
        let mut n = 0;
        timed(
            &mut samples,
            Duration::from_secs(60),
            || -> Result<(), ()> {
                n += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((samples.len(), n), (1_000, 1_000));
        let mut samples = sample_buffer(1_000_000);
        let elapsed = timed(
            &mut samples,
            Duration::from_millis(20),
            || -> Result<(), ()> {
                std::thread::sleep(Duration::from_millis(1));
                Ok(())
            },
        )
        .unwrap();
        assert!(
            samples.len() < 100 && elapsed >= 20_000_000,
            "{}",
            samples.len()
        );
        let mut samples = sample_buffer(1_000);
        let mut left = 3;
        let e = timed(&mut samples, Duration::from_secs(60), || {
            left -= 1;
            if left == 0 {
                Err("gone")
            } else {
                Ok(())
            }
        });
        assert_eq!((e, samples.len()), (Err("gone"), 2));
    }
}
