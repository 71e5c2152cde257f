/// mimalloc instead of the system allocator: exhaustive search copies and
/// drops millions of small states, a pattern on which glibc's malloc spends
/// more time consolidating free chunks than the search spends stepping.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    zkcheck::cli::main()
}
