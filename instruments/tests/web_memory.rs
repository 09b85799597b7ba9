//! The web dashboard's memory over a long run with a browser-like client reading its stream:
//! alone in its test binary, so the process's RSS is this run's.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use giving_instruments::{Overseer, Web};

/// Reads `stream` until `until` passes or it closes: the bytes read.
fn read_for(mut stream: TcpStream, until: Duration) -> usize {
    let deadline = Instant::now() + until;
    let mut buffer = vec![0u8; 1 << 16];
    let mut total = 0;
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    while Instant::now() < deadline {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(_) => {}
        }
    }
    total
}

fn open_events(address: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    let request = format!("GET /events HTTP/1.1\r\nHost: {address}\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// This process's resident memory, in kB (Linux).
fn rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn memory_stays_flat_over_a_long_run_with_a_client_reading() {
    if rss_kb().is_none() {
        eprintln!("SKIPPED: memory_stays_flat_over_a_long_run_with_a_client_reading: no /proc");
        return;
    }
    // GIVING_WEB_RSS_EVENTS=50000000 (in release) for the figure in docs/dashboard.md; CI's
    // default run is bounded to 45 s.
    let asked: Option<u64> = std::env::var("GIVING_WEB_RSS_EVENTS")
        .ok()
        .and_then(|n| n.parse().ok());
    let events = asked.unwrap_or(2_000_000);
    let limit = match asked {
        Some(_) => Duration::from_secs(3600),
        None => Duration::from_secs(45),
    };
    let web = Web::bind("127.0.0.1:0").unwrap().banner(false);
    let address = web.local_addr();
    let reading =
        std::thread::spawn(move || read_for(open_events(address), limit + Duration::from_secs(15)));
    let started = Instant::now();
    let run = Overseer::new().with(web).run(|| {
        let mut samples = Vec::new();
        let mut given = 0;
        for step in 0..events {
            let loss = 1.0 / (step as f64 + 1.0);
            let accuracy = step as f64 / events as f64;
            giving::give!(loss, accuracy, global_step = step);
            given += 1;
            if step % (events / 10).max(1) == 0 {
                samples.push(rss_kb().unwrap());
            }
            if step % 4096 == 0 && started.elapsed() > limit {
                break;
            }
        }
        samples.push(rss_kb().unwrap());
        (given, samples)
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let (given, samples) = run.output.unwrap();
    // From the third sample on (the state, the subscription's queue and the server are
    // warm), within 8 MB.
    let warm = samples[2.min(samples.len() - 1)];
    let last = *samples.last().unwrap();
    eprintln!(
        "{given} events in {:.1} s, RSS (kB) sampled: {samples:?}",
        started.elapsed().as_secs_f64()
    );
    assert!(given >= 100_000, "only {given} events");
    assert!(
        last <= warm + 8 * 1024,
        "RSS grew from {warm} kB to {last} kB over {given} events"
    );
    assert!(reading.join().unwrap() > 0, "the client read nothing");
}
