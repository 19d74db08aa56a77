//! Child processes that die with the thread that started them: a kaas-ref process a test
//! starts, an Apache JVM the harness launches, the `kconform` a test runs. Without it a killed
//! parent (a CI timeout, cargo killed and then the test binary it left running) leaves its
//! brokers running on, loading the machine under the next run. On Linux the kernel does it
//! (PR_SET_PDEATHSIG); elsewhere nothing is asked.
//!
//! The kernel watches the spawning *thread*, not the process: spawn from a thread that lives
//! as long as the child must (a test's own thread, or a keeper thread), never from a pooled one
//! that may be retired (tokio's blocking pool retires a thread after 10 s idle).

use std::process::Command;

/// Asks that the process `cmd` spawns be killed (SIGKILL) when the thread that spawns it ends.
pub fn dies_with_its_thread(cmd: &mut Command) -> &mut Command {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe; it only asks the kernel to SIGKILL the child
        // when the thread that spawned it ends.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    cmd
}
