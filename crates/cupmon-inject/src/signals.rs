//! Signals: SIGUSR2 toggles a trace window (when asked for), and SIGTERM or
//! SIGINT left at their default action first flush the dump, then end the
//! process as they would have. SIGTERM and SIGABRT (a watchdog killing a hung job:
//! PyTorch's NCCL watchdog aborts) first write a hang record into the dump.
//!
//! A handler may only do async-signal-safe work, so it writes the signal
//! number into a pipe; a thread reads the pipe and does the real work. In a
//! child made by `fork` (no such thread, the pipe is the parent's) a signal
//! takes its default action instead.

use std::sync::atomic::{AtomicI32, Ordering};

static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// The listener writes a byte here when it is done with a SIGABRT: `abort(3)` ends
/// the process as soon as the handler returns, so the handler waits for it.
static ACK_READ: AtomicI32 = AtomicI32::new(-1);
static ACK_WRITE: AtomicI32 = AtomicI32::new(-1);
/// How long a SIGABRT handler waits for the hang record and the flush.
const ABORT_WAIT_MS: libc::c_int = 15_000;

extern "C" fn on_signal(sig: libc::c_int) {
    if !crate::owner::is_owner() {
        // A child made by `fork`: the pipe leads to the parent's thread, which would
        // stop the parent's session and end the parent. The signal is the child's:
        // it acts as it would without cupmon.
        // SAFETY: signal(2) and raise(3) are async-signal-safe; the signal is
        // blocked until this handler returns, then delivered with its default action.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return;
    }
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = sig as u8;
        // SAFETY: write(2) is async-signal-safe; `byte` is a valid 1-byte buffer.
        unsafe { libc::write(fd, std::ptr::addr_of!(byte).cast(), 1) };
        let ack = ACK_READ.load(Ordering::Relaxed);
        if sig == libc::SIGABRT && ack >= 0 {
            let mut poll = libc::pollfd {
                fd: ack,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll(2) and read(2) are async-signal-safe; a valid pollfd and a
            // 1-byte buffer.
            unsafe {
                if libc::poll(&mut poll, 1, ABORT_WAIT_MS) == 1 {
                    let mut done = 0u8;
                    libc::read(ack, std::ptr::addr_of_mut!(done).cast(), 1);
                }
            }
        }
    }
}

/// Whether `sig` still has its default action (an application handler wins).
fn has_default_action(sig: libc::c_int) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one
    // into `old`, a zeroed, valid sigaction.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_DFL
    }
}

fn install(sig: libc::c_int) -> bool {
    // SAFETY: a zeroed sigaction with our handler (a plain extern "C" fn that
    // only calls write(2)) and SA_RESTART, so interrupted system calls of the
    // application resume.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(sig, &action, std::ptr::null_mut()) == 0
    }
}

/// Restore the default action and deliver `sig` to the process again.
fn die_by(sig: libc::c_int) {
    // SAFETY: resetting to SIG_DFL and signalling our own pid are plain syscalls.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::kill(libc::getpid(), sig);
    }
}

/// Flush on SIGTERM/SIGINT; with `toggle`, SIGUSR2 opens and closes windows.
pub(crate) fn install_handlers(toggle: bool) {
    let mut fds = [-1; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        cupmon_log::warn!("no signal handling (pipe failed)");
        return;
    }
    PIPE_WRITE.store(fds[1], Ordering::Relaxed);
    let mut acks = [-1; 2];
    // SAFETY: as above.
    if unsafe { libc::pipe2(acks.as_mut_ptr(), libc::O_CLOEXEC) } == 0 {
        ACK_READ.store(acks[0], Ordering::Relaxed);
        ACK_WRITE.store(acks[1], Ordering::Relaxed);
    }
    let mut handled = Vec::new();
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGABRT] {
        if has_default_action(sig) && install(sig) {
            handled.push(sig);
        }
    }
    if toggle && install(libc::SIGUSR2) {
        handled.push(libc::SIGUSR2);
    }
    if handled.is_empty() {
        return;
    }
    let read_fd = fds[0];
    let spawned = std::thread::Builder::new()
        .name("cupmon-signals".into())
        .spawn(move || listen(read_fd));
    if let Err(e) = spawned {
        cupmon_log::warn!("no signal handling: {e}");
    }
}

fn listen(fd: libc::c_int) {
    // This thread waits for the others' handlers: it must not run one itself (a
    // SIGABRT handler here would wait for this very thread).
    // SAFETY: a sigset built with sigemptyset/sigaddset, applied to this thread only.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGABRT, libc::SIGUSR2] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    loop {
        let mut byte = 0u8;
        // SAFETY: reading one byte into a valid 1-byte buffer.
        let n = unsafe { libc::read(fd, std::ptr::addr_of_mut!(byte).cast(), 1) };
        if n != 1 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        let sig = libc::c_int::from(byte);
        let _ = std::panic::catch_unwind(|| handle(sig));
    }
}

fn handle(sig: libc::c_int) {
    if sig == libc::SIGUSR2 {
        toggle_window();
        return;
    }
    if sig == libc::SIGTERM || sig == libc::SIGABRT {
        let name = if sig == libc::SIGTERM {
            "SIGTERM"
        } else {
            "SIGABRT"
        };
        let written = crate::session::with(|s| {
            s.monitor
                .write_hang_record(cupmon_monitor::HangTrigger::Signal, name)
        });
        match written {
            Ok(path) => cupmon_log::info!("on {name}: hang record {}", path.display()),
            Err(e) => cupmon_log::warn!("on {name}: no hang record: {e}"),
        }
    }
    // SIGTERM / SIGINT / SIGABRT: save what was recorded, then end as the signal would.
    if let Some(Err(e)) = crate::session::stop() {
        cupmon_log::warn!("on signal {sig}: {e}");
    }
    if sig == libc::SIGABRT {
        let fd = ACK_WRITE.load(Ordering::Relaxed);
        let byte = 1u8;
        // SAFETY: writing one byte from a valid buffer to our own pipe.
        unsafe { libc::write(fd, std::ptr::addr_of!(byte).cast(), 1) };
    }
    die_by(sig);
}

fn toggle_window() {
    let open = crate::session::with(|s| Ok(s.monitor.window_open())).unwrap_or(false);
    let result = if open {
        crate::session::end_window_to_files().map(|path| {
            if let Some(path) = path {
                cupmon_log::info!("trace window written to {}", path.display());
            }
        })
    } else {
        crate::session::with(|s| s.open_window("SIGUSR2", None).map(drop))
            .map(|()| cupmon_log::info!("trace window opened (send SIGUSR2 again to close it)"))
    };
    if let Err(e) = result {
        cupmon_log::warn!("SIGUSR2: {e}");
    }
}
