"""What a measurement must pass: the correctness gate, the timed outputs, guards on untrusted code, and the judges that apply the integrity checks (sitegen.rules.integrity)."""
