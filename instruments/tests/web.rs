//! The web dashboard over real sockets: what each path answers, the guarded stop, and a flood
//! of connections and garbage while a run goes on.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use giving::iterate;
use giving_instruments::{Overseer, Web};

/// Sends `request` as is and returns the whole answer (the server closes or 2 s pass).
fn send(address: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

fn get(address: SocketAddr, path: &str) -> String {
    send(
        address,
        format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
}

fn status(answer: &str) -> &str {
    answer.get(9..12).unwrap_or(answer)
}

#[test]
fn serves_the_page_the_state_and_errors_for_the_rest() {
    let web = Web::bind("127.0.0.1:0")
        .unwrap()
        .banner(false)
        .title("routes test");
    let address = web.local_addr();
    let checks = std::thread::spawn(move || {
        // The run gives for a while; the server answers meanwhile.
        std::thread::sleep(Duration::from_millis(300));
        let page = get(address, "/");
        assert_eq!(status(&page), "200", "{page}");
        assert!(page.contains(r#"<meta name="giving-token" content="">"#));
        assert!(page.contains("content-security-policy"));
        let script = get(address, "/app.js");
        assert!(script.contains("EventSource"), "{}", &script[..200]);
        let state = get(address, "/state");
        assert!(state.contains(r#""title":"routes test""#), "{state}");
        assert!(state.contains(r#""key":"loss""#), "{state}");
        assert_eq!(status(&get(address, "/nothing")), "404");
        assert_eq!(status(&get(address, "/../../etc/passwd")), "404");
        let post = format!(
            "POST /stop HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(status(&send(address, post.as_bytes())), "403", "read-only");
        let delete = format!("DELETE / HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        assert_eq!(status(&send(address, delete.as_bytes())), "405");
        let big =
            format!("POST /stop HTTP/1.1\r\nHost: {address}\r\nContent-Length: 100000\r\n\r\n");
        assert_eq!(status(&send(address, big.as_bytes())), "413");
        assert_eq!(status(&send(address, b"NOT HTTP AT ALL\r\n\r\n")), "400");
        let huge = format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(64 * 1024));
        assert_eq!(status(&send(address, huge.as_bytes())), "431");
    });
    let run = Overseer::new().with(web).run(move || {
        let deadline = Instant::now() + Duration::from_secs(3);
        for step in iterate("train", 0..1_000_000u64) {
            let loss = 1.0 / (step as f64 + 1.0);
            giving::give!(loss);
            if Instant::now() > deadline || checks.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        checks.join()
    });
    run.output.unwrap().unwrap();
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

mod browser;

/// A run of two ranks, loss and accuracy per step, with progress and a rate, for `secs`.
fn synthetic_run(secs: f64) {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let steps = 2_000u64;
    for step in iterate("train", 0..steps) {
        for rank in 0..2u64 {
            let loss = (2.0 + rank as f64) / (step as f64 + 1.0).sqrt();
            giving::give!(rank, loss, global_step = step, total_steps = steps);
        }
        if step % 100 == 99 {
            giving::give!(task = "train", rate = 1234.5, units = "items/s");
        }
        let left = deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(left / (steps - step) as u32);
    }
}

/// `document.getElementById(id).dataset[name]` as a number, in the page.
fn data(id: &str, name: &str) -> String {
    format!("Number(document.getElementById('{id}').dataset.{name})")
}

#[test]
fn a_real_browser_draws_every_rank_and_the_progress_in_time() {
    let test = "a_real_browser_draws_every_rank_and_the_progress_in_time";
    let Some(chromium) = browser::chromium(test) else {
        return;
    };
    let web = Web::bind("127.0.0.1:0")
        .unwrap()
        .banner(false)
        .title("browser test");
    let url = web.url();
    let giving = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let still_giving = giving.clone();
    let looking = std::thread::spawn(move || {
        let mut page = browser::Browser::open(&chromium, &url);
        assert!(
            page.wait_for(
                &format!("{} >= 4", data("timings", "updates")),
                Duration::from_secs(20)
            ),
            "no updates: {}",
            page.dom()
        );
        let load_ms = page.eval(&data("timings", "loadMs")).as_f64().unwrap();
        let max_latency_ms = page
            .eval(&data("timings", "maxLatencyMs"))
            .as_f64()
            .unwrap();
        let updates = page.eval(&data("timings", "updates")).as_f64().unwrap();
        still_giving.store(false, std::sync::atomic::Ordering::SeqCst);
        assert!(
            page.wait_for(
                &format!("{} === 100", data("run-progress", "percent")),
                Duration::from_secs(20)
            ),
            "progress: {}",
            page.dom()
        );
        (page.dom(), load_ms, max_latency_ms, updates)
    });
    let run = Overseer::new().with(web).run(|| {
        // Gives until the page has seen a few updates live, then to the end.
        while giving.load(std::sync::atomic::Ordering::SeqCst) && !looking.is_finished() {
            synthetic_run(2.0);
        }
        synthetic_run(0.5);
        looking.join()
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let (dom, load_ms, max_latency_ms, updates) = run.output.unwrap().unwrap();
    eprintln!(
        "page load {load_ms} ms, updates drawn at most {max_latency_ms} ms after their event ({updates} updates)"
    );
    assert!(load_ms < 1000.0, "page load took {load_ms} ms");
    assert!(
        max_latency_ms < 1000.0,
        "an update took {max_latency_ms} ms"
    );
    let chart = browser::attribute(&dom, r#"data-key="loss""#, "data-points").unwrap();
    assert!(
        chart.parse::<u64>().unwrap() > 100,
        "loss chart points: {chart}"
    );
    for rank in ["rank 0", "rank 1"] {
        assert!(
            dom.contains(&format!(r#"<li data-label="{rank}">"#)),
            "{rank} not in the legend"
        );
    }
    assert!(dom.contains("1.2k items/s"), "no rate");
}

/// Reads from `stream` for `for_`, counting SSE batches (`event: state`).
fn count_batches(stream: &mut TcpStream, for_: Duration) -> usize {
    let deadline = Instant::now() + for_;
    let mut batches = 0;
    let mut buffer = vec![0u8; 1 << 16];
    let mut tail = Vec::new();
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    while Instant::now() < deadline {
        if let Ok(n) = stream.read(&mut buffer) {
            if n == 0 {
                break;
            }
            tail.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&tail);
            batches += text.matches("event: state").count();
            // Keep the end, in case a marker is split between reads.
            let keep = tail.len().saturating_sub(16);
            tail.drain(..keep);
        }
    }
    batches
}

fn open_events(address: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    let request = format!("GET /events HTTP/1.1\r\nHost: {address}\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// Answers on `streams` within a second: their status codes (`None`: nothing came back).
fn statuses(streams: &mut [TcpStream]) -> Vec<Option<String>> {
    streams
        .iter_mut()
        .map(|stream| {
            stream
                .set_read_timeout(Some(Duration::from_millis(20)))
                .unwrap();
            let mut buffer = [0u8; 64];
            match stream.read(&mut buffer) {
                Ok(n) if n >= 12 => Some(String::from_utf8_lossy(&buffer[9..12]).into_owned()),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn two_hundred_connections_and_garbage_leave_the_run_and_a_client_going() {
    let web = Web::bind("127.0.0.1:0")
        .unwrap()
        .banner(false)
        .max_connections(64);
    let address = web.local_addr();
    let flooding = std::thread::spawn(move || {
        let mut client = open_events(address);
        assert!(count_batches(&mut client, Duration::from_millis(600)) >= 1);
        let mut flood: Vec<TcpStream> = (0..200)
            .map(|i| {
                let mut stream = TcpStream::connect(address).unwrap();
                let _ = match i % 3 {
                    0 => stream
                        .write_all(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n"),
                    // A head that never ends: the server closes it after its head timeout.
                    1 => stream.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n"),
                    _ => Ok(()),
                };
                stream
            })
            .collect();
        // The client already connected goes on receiving batches meanwhile.
        let during = count_batches(&mut client, Duration::from_secs(1));
        let answers = statuses(&mut flood);
        let refused = answers
            .iter()
            .filter(|a| a.as_deref() == Some("503"))
            .count();
        let bad = answers
            .iter()
            .filter(|a| a.as_deref() == Some("400"))
            .count();
        drop(flood);
        // Once the flood is gone, a new client is served.
        let deadline = Instant::now() + Duration::from_secs(10);
        let page = loop {
            let page = get(address, "/state");
            if status(&page) == "200" || Instant::now() > deadline {
                break page;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        (during, refused, bad, status(&page).to_owned())
    });
    let run = Overseer::new().with(web).run(|| {
        let mut steps = 0u64;
        for step in iterate("train", 0..u64::MAX) {
            let loss = 1.0 / (step as f64 + 1.0);
            giving::give!(loss);
            steps += 1;
            if flooding.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        (steps, flooding.join())
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let (steps, flood) = run.output.unwrap();
    let (during, refused, bad, after) = flood.unwrap();
    assert!(
        during >= 2,
        "the connected client got {during} batches during the flood"
    );
    // 64 slots, one the client's, and those of garbage come back once answered: many of the
    // 200 are refused, the others answered or held until their head times out.
    assert!(refused >= 50, "{refused} refused");
    assert!(bad >= 20, "{bad} answered 400 for garbage");
    assert_eq!(after, "200");
    assert!(steps > 1000, "the run took {steps} steps meanwhile");
}

#[test]
fn the_stop_button_takes_the_page_token_and_refuses_cross_site_requests() {
    let web = Web::bind("127.0.0.1:0")
        .unwrap()
        .banner(false)
        .allow_stop(true);
    let address = web.local_addr();
    let stopping = std::thread::spawn(move || {
        let page = get(address, "/");
        let at = page.find(r#"name="giving-token" content=""#).unwrap() + 29;
        let token = page[at..at + 32].to_owned();
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{token}");
        let stop = |host: &str, extra: &str| {
            let request = format!(
                "POST /stop HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Length: 0\r\n\
                 Connection: close\r\n\r\n"
            );
            status(&send(address, request.as_bytes())).to_owned()
        };
        let host = address.to_string();
        let refused = [
            stop(&host, ""),
            stop(
                &host,
                "X-Giving-Token: 00000000000000000000000000000000\r\n",
            ),
            stop(
                &host,
                &format!("X-Giving-Token: {token}\r\nOrigin: http://evil.example\r\n"),
            ),
            stop(
                &format!("evil.example:{}", address.port()),
                &format!("X-Giving-Token: {token}\r\n"),
            ),
        ];
        let allowed = stop(
            &host,
            &format!("X-Giving-Token: {token}\r\nOrigin: http://{host}\r\n"),
        );
        (refused, allowed)
    });
    let run = Overseer::new().with(web).run(|| {
        let mut steps = 0u64;
        let deadline = Instant::now() + Duration::from_secs(30);
        for _ in iterate("train", 0..u64::MAX) {
            steps += 1;
            std::thread::sleep(Duration::from_micros(200));
            if Instant::now() > deadline {
                break;
            }
        }
        (steps, Instant::now() < deadline)
    });
    let (refused, allowed) = stopping.join().unwrap();
    assert_eq!(refused, ["403", "403", "403", "403"]);
    assert_eq!(allowed, "204");
    let (steps, stopped_early) = run.output.unwrap();
    assert!(
        stopped_early,
        "the page's stop did not end the loop ({steps} steps)"
    );
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}
