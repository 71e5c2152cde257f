/// mimalloc, through its plain `malloc` path where the alignment allows
/// (see `zkcheck_cli::allocator`).
#[global_allocator]
static ALLOCATOR: zkcheck_cli::allocator::Mimalloc = zkcheck_cli::allocator::Mimalloc;

fn main() -> std::process::ExitCode {
    zkcheck_cli::command::main()
}
