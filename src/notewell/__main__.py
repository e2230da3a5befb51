from notewell.cli import main

main()
