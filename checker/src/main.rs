fn main() {
    println!("zkcheck: under construction");
}
