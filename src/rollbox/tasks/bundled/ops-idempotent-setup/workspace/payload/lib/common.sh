greeting() {
    echo "hello from the payload"
}
