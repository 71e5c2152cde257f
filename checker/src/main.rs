/// mimalloc, through its plain `malloc` path where the alignment allows
/// (see `zkcheck::allocator`).
#[global_allocator]
static ALLOCATOR: zkcheck::allocator::Mimalloc = zkcheck::allocator::Mimalloc;

fn main() -> std::process::ExitCode {
    zkcheck::cli::main()
}
