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
