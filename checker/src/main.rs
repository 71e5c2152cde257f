fn main() -> std::process::ExitCode {
    zkcheck::cli::main()
}
