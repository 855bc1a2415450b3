fn main() {
    eprintln!("ststui: not built yet");
    std::process::exit(2);
}
