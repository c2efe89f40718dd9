from cardshoe.controller.cli.main import main

main()
