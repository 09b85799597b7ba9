//! A real headless Chromium for the web dashboard's tests: the DOM after the page ran a while,
//! a page driven over the DevTools protocol, and its screenshot. Shared by giving-instruments' and giving-cli's tests (`#[path]`).

#![allow(dead_code)] // each test crate uses its part

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The Chromium binary: `$GIVING_CHROMIUM`, else `chromium` or `chromium-browser` on the
/// PATH. `None` (and a `SKIPPED` line on stderr) where there is none.
pub fn chromium(test: &str) -> Option<PathBuf> {
    let candidates = std::env::var_os("GIVING_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["chromium", "chromium-browser"].map(PathBuf::from));
    for candidate in candidates {
        let found = Command::new(&candidate)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if found {
            return Some(candidate);
        }
    }
    eprintln!("SKIPPED: {test}: no chromium on this machine (.ci/run installs Debian's)");
    None
}

fn headless(chromium: &Path, profile: &Path) -> Command {
    let mut command = Command::new(chromium);
    command
        .arg("--headless=new")
        .arg("--no-sandbox")
        .arg("--disable-gpu")
        .arg("--no-first-run")
        .arg("--disable-extensions")
        .arg(format!("--user-data-dir={}", profile.display()))
        .stdin(Stdio::null());
    command
}

/// The page's DOM once it ran for `wait` (of real time: the stream keeps the page busy).
pub fn dump_dom(chromium: &Path, url: &str, wait: Duration) -> String {
    let profile = tempfile::tempdir().unwrap();
    let output = headless(chromium, profile.path())
        .arg(format!("--virtual-time-budget={}", wait.as_millis()))
        .arg("--dump-dom")
        .arg(url)
        .stderr(Stdio::null())
        .output()
        .expect("chromium runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A headless Chromium driven over the DevTools protocol, for what needs real time (the
/// page's timings: `--dump-dom` dumps at the load event, and virtual time fakes the clock).
pub struct Browser {
    child: std::process::Child,
    socket: std::net::TcpStream,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Opens `url` in a new headless Chromium.
    pub fn open(chromium: &Path, url: &str) -> Self {
        let profile = tempfile::tempdir().unwrap();
        let child = headless(chromium, profile.path())
            .arg("--remote-debugging-port=0")
            .arg("--window-size=1280,900")
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        // Chromium writes its port to DevToolsActivePort in the profile once it listens.
        let port_file = profile.path().join("DevToolsActivePort");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let port: u16 = loop {
            let port = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|text| text.lines().next()?.trim().parse().ok());
            if let Some(port) = port {
                break port;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "chromium did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let page = loop {
            let list = http_get(port, "/json/list");
            let targets: serde_json::Value = serde_json::from_str(&list).unwrap_or_default();
            let page = targets
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["type"] == "page");
            if let Some(ws) = page.and_then(|p| p["webSocketDebuggerUrl"].as_str()) {
                break ws.to_owned();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no page target: {list}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let path = &page[page.find("/devtools").unwrap()..];
        let socket = websocket(port, path);
        Self {
            child,
            socket,
            next_id: 0,
            _profile: profile,
        }
    }

    /// Sends the DevTools command `method` with `params` and returns its result.
    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next_id += 1;
        let id = self.next_id;
        let command = serde_json::json!({"id": id, "method": method, "params": params});
        send_text(&mut self.socket, &command.to_string());
        loop {
            let message: serde_json::Value =
                serde_json::from_str(&read_text(&mut self.socket)).unwrap();
            if message["id"] == id {
                return message["result"].clone();
            }
        }
    }

    /// Evaluates `expression` in the page and returns its value as JSON.
    pub fn eval(&mut self, expression: &str) -> serde_json::Value {
        let params = serde_json::json!({"expression": expression, "returnByValue": true});
        self.call("Runtime.evaluate", params)["result"]["value"].clone()
    }

    /// A PNG of the page as it is now (the window, 1280×900), written to `file`. Of this page,
    /// in real time: `chromium --screenshot` runs the page on virtual time, which a stream of
    /// server-sent events outruns (its budget of seconds passed in milliseconds, before a debug
    /// build's first batch came).
    pub fn screenshot(&mut self, file: &Path) {
        use base64::Engine as _;
        let result = self.call(
            "Page.captureScreenshot",
            serde_json::json!({"format": "png"}),
        );
        let data = result["data"].as_str().expect("a screenshot's data");
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("base64");
        std::fs::write(file, png).unwrap();
    }

    /// The page's DOM now.
    pub fn dom(&mut self) -> String {
        self.eval("document.documentElement.outerHTML")
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Evaluates `expression` every 100 ms until it is true or `timeout` passes; whether it
    /// became true.
    pub fn wait_for(&mut self, expression: &str, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        while std::time::Instant::now() < deadline {
            if self.eval(expression) == serde_json::Value::Bool(true) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_get(port: u16, path: &str) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    let _ = stream.write_all(request.as_bytes());
    // DevTools keeps the connection open: read the head, then Content-Length bytes.
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    String::from_utf8_lossy(&body).into_owned()
}

/// A WebSocket to the DevTools endpoint `path` (RFC 6455, the little the protocol needs: text
/// frames, masked from the client).
fn websocket(port: u16, path: &str) -> std::net::TcpStream {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 101"), "no websocket: {head}");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

fn send_text(stream: &mut std::net::TcpStream, text: &str) {
    use std::io::Write;
    let payload = text.as_bytes();
    let mut frame = vec![0x81u8];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n <= 0xffff => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let mask = [0x12u8, 0x34, 0x56, 0x78];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    stream.write_all(&frame).unwrap();
}

fn read_text(stream: &mut std::net::TcpStream) -> String {
    use std::io::Read;
    let mut message = Vec::new();
    loop {
        let mut head = [0u8; 2];
        stream.read_exact(&mut head).unwrap();
        let len = match head[1] & 0x7f {
            126 => {
                let mut n = [0u8; 2];
                stream.read_exact(&mut n).unwrap();
                u16::from_be_bytes(n) as usize
            }
            127 => {
                let mut n = [0u8; 8];
                stream.read_exact(&mut n).unwrap();
                u64::from_be_bytes(n) as usize
            }
            n => n as usize,
        };
        let mut payload = vec![0u8; len];
        stream.read_exact(&mut payload).unwrap();
        message.extend_from_slice(&payload);
        // FIN set: the message is whole (continuation frames carry the rest otherwise).
        if head[0] & 0x80 != 0 {
            return String::from_utf8_lossy(&message).into_owned();
        }
    }
}

/// The value of attribute `name` on the first element whose tag text contains `marker`
/// (`id="timings"`), from a dumped DOM.
pub fn attribute<'a>(dom: &'a str, marker: &str, name: &str) -> Option<&'a str> {
    let start = dom.find(marker)?;
    let tag_start = dom[..start].rfind('<')?;
    let tag = &dom[tag_start..tag_start + dom[tag_start..].find('>')?];
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = tag[at..].find('"')?;
    Some(&tag[at..at + end])
}
